internal import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// Reads and writes a ``CookieJar``'s file: libcurl's Netscape format, mode 0600, replaced
/// atomically (temporary file, fsync, rename), never followed through a symbolic link.
package enum CookieFile {
    /// One cookie in libcurl's Netscape format, as its bytes (no newline, no NUL).
    package typealias CookieLine = [UInt8]

    package static let header = "# Netscape HTTP Cookie File\n# Written by Curlew; one cookie a line.\n"

    /// The cookie lines of the file (comments skipped, `#HttpOnly_` lines kept); none when it does
    /// not exist. Lines are bytes, as libcurl keeps them: a cookie value need not be UTF-8, and
    /// must come back from the file exactly as the server sent it.
    package static func read(_ path: String) throws(CurlewError) -> [CookieLine] {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return [] }
            throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) cannot be read: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) is not a regular file")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) cannot be read")
        }
        let httpOnly = Array("#HttpOnly_".utf8)
        return data.split(whereSeparator: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }).compactMap { line in
            let bytes = Array(line)
            if bytes.starts(with: httpOnly) { return bytes }
            if bytes.first == UInt8(ascii: "#") || bytes.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) { return nil }
            return bytes
        }
    }

    /// Replaces the file with `lines` (mode 0600 whatever the umask).
    package static func write(_ lines: [CookieLine], to path: String) throws(CurlewError) {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var contents = Data(header.utf8)
        for line in lines {
            contents.append(contentsOf: line)
            contents.append(UInt8(ascii: "\n"))
        }
        do {
            try DiskFiles.replace(url.lastPathComponent, in: directory, with: contents)
        } catch {
            throw CurlewError(code: .fileNotWritable, message: "the cookie file \(path) cannot be written: \(error)", underlying: error)
        }
    }
}
