internal import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// Reads and writes a ``CookieJar``'s file: libcurl's Netscape format, mode 0600, replaced
/// atomically (temporary file, fsync, rename), never followed through a symbolic link.
package enum CookieFile {
    package static let header = "# Netscape HTTP Cookie File\n# Written by Curlew; one cookie a line.\n"

    /// The cookie lines of the file (comments skipped, `#HttpOnly_` lines kept); none when it does
    /// not exist.
    package static func read(_ path: String) throws(CurlewError) -> [String] {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return [] }
            throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) is not a regular file")
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) cannot be read")
        }
        return text.split(whereSeparator: \.isNewline).compactMap { line in
            if line.hasPrefix("#HttpOnly_") { return String(line) }
            if line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) { return nil }
            return String(line)
        }
    }

    /// Replaces the file with `lines` (mode 0600 whatever the umask).
    package static func write(_ lines: [String], to path: String) throws(CurlewError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let text = header + lines.map { $0 + "\n" }.joined()
        do {
            try DiskFiles.replace(url.lastPathComponent, in: directory, with: Data(text.utf8))
        } catch {
            throw CurlewError(code: .fileNotWritable, message: "the cookie file \(path) cannot be written: \(error)", underlying: error)
        }
    }
}
