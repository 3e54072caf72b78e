@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A resumable download whose file changes on the server between attempts is never spliced from
/// two versions, whichever validator the server offers and however it treats `If-Range`.
@Suite("Resuming a file that changed", .serialized, .timeLimit(.minutes(2)))
struct ChangedFileResumeTests {
    let resumable = DownloadOptions(resumable: true)
    let cut = 100 * 1024

    /// The validator is `Last-Modified` (no `ETag`) and the server ignores `If-Range`: a `206` of
    /// the new version must not be appended to the old version's bytes.
    @Test func aChangedLastModifiedOnARangeAnswerStartsOverInsteadOfSplicingTwoVersions() async throws {
        let folder = try temporaryDirectory("audit-lm-splice")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        file.update { $0.sendsETag = false }
        try await file.interrupted(into: folder) { server, client, target in
            file.update {
                $0.version = 2
                $0.ignoresIfRange = true
            }
            let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable)
            let length = file.behaviour.withLock { $0.length }
            #expect(try Data(contentsOf: target) == Data(VersionedFile.bytes(version: 2, length: length)), "version 2 whole, not spliced")
            #expect(downloaded.status == .ok)
            #expect(downloaded.resumedBytes == 0)
            let requests = server.requests
            try #require(requests.count == 3)
            #expect(requests[1].header("If-Range") == VersionedFile.lastModified(version: 1))
            #expect(requests[2].header("Range") == nil, "the restart asks for the whole file")
            #expect(contents(of: folder) == ["v.bin"])
        }
    }

    /// A weak `ETag` cannot go into `If-Range`, and while the file has an entity tag its
    /// `Last-Modified` date must not either (RFC 9110 §13.1.5): the download starts over rather
    /// than ask for a range under a validator the server may not honour.
    @Test func aWeakETagIsNeverReplacedByTheDateInIfRange() async throws {
        let folder = try temporaryDirectory("audit-weak-etag")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        file.update { $0.weakETag = true }
        try await file.interrupted(into: folder) { server, client, target in
            let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable)
            let length = file.behaviour.withLock { $0.length }
            #expect(try Data(contentsOf: target) == Data(VersionedFile.bytes(version: 1, length: length)))
            #expect(downloaded.resumedBytes == 0)
            let requests = server.requests
            try #require(requests.count == 2)
            #expect(requests[1].header("If-Range") == nil)
            #expect(requests[1].header("Range") == nil)
        }
    }

    /// With the same `Last-Modified` the range is appended as usual.
    @Test func anUnchangedLastModifiedOnARangeAnswerIsAppended() async throws {
        let folder = try temporaryDirectory("audit-lm-same")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        file.update { $0.sendsETag = false }
        try await file.interrupted(into: folder) { server, client, target in
            file.update { $0.ignoresIfRange = true }
            let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable)
            let length = file.behaviour.withLock { $0.length }
            #expect(downloaded.status == .partialContent)
            #expect(downloaded.resumedBytes == Int64(cut))
            #expect(try Data(contentsOf: target) == Data(VersionedFile.bytes(version: 1, length: length)))
            #expect(server.requestCount == 2)
        }
    }

    /// A `416` from a server that ignores `If-Range` names the partial file's size, but its
    /// `ETag` says the file was replaced (same size, other bytes): the old bytes are not passed
    /// off as the file; it is fetched again.
    @Test func aFourSixteenForAnotherVersionOfTheSameSizeStartsOver() async throws {
        let folder = try temporaryDirectory("audit-416-etag")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        try await file.interrupted(into: folder) { server, client, target in
            let length = file.behaviour.withLock { $0.length }
            let partial = try #require(contents(of: folder).first { $0.hasSuffix(".curlew-partial") })
            try Data(VersionedFile.bytes(version: 1, length: length)).write(to: folder.appendingPathComponent(partial))
            file.update {
                $0.version = 2
                $0.ignoresIfRange = true
            }
            let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable)
            #expect(downloaded.status == .ok)
            #expect(try Data(contentsOf: target) == Data(VersionedFile.bytes(version: 2, length: length)))
            let requests = server.requests
            try #require(requests.count == 3)
            #expect(requests[1].header("Range") == "bytes=\(length)-")
            #expect(requests[2].header("Range") == nil)
            #expect(contents(of: folder) == ["v.bin"])
        }
    }

    /// A bare `ETag` (`v1`, not quoted) next to a `Last-Modified` is still an entity tag: an
    /// unchanged file continues with a range, a changed one starts over.
    @Test func aBareETagIsComparedAsAnETagNotAsADate() async throws {
        for changes in [false, true] {
            let folder = try temporaryDirectory("audit-bare-etag")
            defer { try? FileManager.default.removeItem(at: folder) }
            let file = VersionedFile()
            file.update { $0.bareETag = true }
            try await file.interrupted(into: folder) { server, client, target in
                file.update {
                    $0.ignoresIfRange = true
                    if changes { $0.version = 2 }
                }
                let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable)
                let length = file.behaviour.withLock { $0.length }
                #expect(server.requests.dropFirst().first?.header("If-Range") == "v1")
                #expect(downloaded.status == (changes ? .ok : .partialContent))
                #expect(server.requestCount == (changes ? 3 : 2))
                #expect(try Data(contentsOf: target) == Data(VersionedFile.bytes(version: changes ? 2 : 1, length: length)))
            }
        }
    }
}
