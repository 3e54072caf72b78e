@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Each hostile `Content-Disposition` of issue 10, served by a real server to a folder
/// destination: the file lands inside the folder under the sanitised name (or the URL's when
/// nothing is left), nothing is written outside it, and a symbolic link planted at the name is
/// neither followed nor replaced.
@Suite("Hostile Content-Disposition at a server", .serialized, .timeLimit(.minutes(1)))
struct HostileNameDownloadTests {
    static let fourKilobytes = String(repeating: "a", count: 4096) + ".txt"

    @Test(
        arguments: [
            ("attachment; filename=\"../../x\"", "x"),
            ("attachment; filename=\"/etc/passwd\"", "passwd"),
            ("attachment; filename=\"..\\\\x\"", "x"),
            ("attachment; filename=\"\"", "served.bin"),
            ("attachment; filename=\"..\"", "served.bin"),
            ("attachment; filename*=UTF-8''..%2F..%2Fescape.txt", "escape.txt"),
            ("attachment; filename*=UTF-8''%2Fetc%2Fshadow", "shadow"),
            ("attachment; filename=\"\(fourKilobytes)\"", String(repeating: "a", count: ContentDisposition.maximumLength - 4) + ".txt"),
        ] as [(String, String)])
    func theFileLandsInsideTheFolderUnderTheSanitisedName(header: String, expected: String) async throws {
        let root = try temporaryDirectory("hostile")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("inbox/deeper", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let encoded = header.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let file = try await client.download(FileGet(path: "/data/served.bin?n=100&cd=\(encoded)"), to: folder)
            #expect(file.url.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path)
            #expect(file.url.lastPathComponent == expected)
            #expect(file.url.lastPathComponent.utf8.count <= ContentDisposition.maximumLength)
            #expect(contents(of: folder) == [expected])
            #expect(contents(of: root) == ["inbox"], "nothing written beside the folder")
            #expect(contents(of: root.appendingPathComponent("inbox")) == ["deeper"])
            #expect(try Data(contentsOf: file.url) == Data(PatternBody.bytes(100)))
        }
    }

    @Test func aSymbolicLinkPlantedAtTheSuggestedNameIsNeitherFollowedNorReplaced() async throws {
        let folder = try temporaryDirectory("hostile-link")
        defer { try? FileManager.default.removeItem(at: folder) }
        let outside = try temporaryDirectory("hostile-outside")
        defer { try? FileManager.default.removeItem(at: outside) }
        let victim = outside.appendingPathComponent("victim.txt")
        try Data("secret".utf8).write(to: victim)
        #expect(symlink(victim.path, folder.appendingPathComponent("report.pdf").path) == 0)
        let header = "attachment; filename=\"report.pdf\"".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let file = try await client.download(FileGet(path: "/file?n=64&cd=\(header)"), to: folder)
            #expect(file.url.lastPathComponent == "report (1).pdf")
            #expect(try Data(contentsOf: victim) == Data("secret".utf8), "the link's target is untouched")
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.appendingPathComponent("report.pdf").path) == victim.path)
            #expect(contents(of: folder) == ["report (1).pdf", "report.pdf"])
            #expect(contents(of: outside) == ["victim.txt"])

            // Even with replacesExisting, the link is replaced by the file, never written through.
            let replacing = try await client.download(
                FileGet(path: "/file?n=64&cd=\(header)"), to: folder.appendingPathComponent("report.pdf"),
                options: DownloadOptions(replacesExisting: true))
            #expect(try Data(contentsOf: victim) == Data("secret".utf8))
            var info = stat()
            #expect(lstat(replacing.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG)
        }
    }
}
