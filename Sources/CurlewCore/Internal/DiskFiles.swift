package import Foundation
#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    package import Darwin
#endif

/// A failed file operation of the disk cache, with the `errno` it ended with.
package struct DiskCacheError: Error, CustomStringConvertible {
    package var operation: String
    package var code: Int32

    package var description: String { "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// The POSIX steps of the disk cache: private directory, crash-safe replace, whole-file reads.
package enum DiskFiles {
    package static let temporaryPrefix = ".tmp-"

    /// Whether a temporary file was left by a writer that is gone: its process (the pid in its
    /// name) no longer exists, or it is older than an hour. A live writer's file — another store
    /// on the same directory, in this process or another — is left alone.
    package static func isAbandonedTemporary(_ name: String, modified: Double?) -> Bool {
        let rest = name.dropFirst(temporaryPrefix.count)
        guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]) else { return true }
        if let modified, Date().timeIntervalSince1970 - modified > 3600 { return true }
        if pid == getpid() { return false }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Creates `path` (and its parents) if needed and sets it to 0700 whatever the umask.
    package static func ensureDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 {
            let code = errno
            if code == ENOENT {
                try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            } else if code != EEXIST {
                throw DiskCacheError(operation: "mkdir", code: code)
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw DiskCacheError(operation: "lstat", code: errno) }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw DiskCacheError(operation: "directory check", code: ENOTDIR) }
        if info.st_mode & 0o777 != 0o700, chmod(path, 0o700) != 0 { throw DiskCacheError(operation: "chmod", code: errno) }
    }

    /// Writes `data` to `directory/name` so that a crash at any point leaves either the old file
    /// or the complete new one: temporary file (0600, `O_EXCL`), write, fsync, rename, fsync of
    /// the directory. The temporary file is removed on failure.
    package static func replace(_ name: String, in directory: String, with data: Data) throws {
        let temporary = directory + "/" + temporaryPrefix + "\(getpid())-" + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DiskCacheError(operation: "open", code: errno) }
        do {
            defer { close(fd) }
            guard fchmod(fd, 0o600) == 0 else { throw DiskCacheError(operation: "fchmod", code: errno) }
            try data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw DiskCacheError(operation: "write", code: errno)
                    }
                    offset += written
                }
            }
            guard fsync(fd) == 0 else { throw DiskCacheError(operation: "fsync", code: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, directory + "/" + name) == 0 else {
            let code = errno
            unlink(temporary)
            throw DiskCacheError(operation: "rename", code: code)
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directoryFD >= 0 else { throw DiskCacheError(operation: "open directory", code: errno) }
        defer { close(directoryFD) }
        guard fsync(directoryFD) == 0 else { throw DiskCacheError(operation: "fsync directory", code: errno) }
    }

    /// The whole file, or `nil` when it cannot be opened (absent, a symlink) or read.
    package static func read(_ path: String, upTo limit: Int = .max) -> Data? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        let length = min(Int(info.st_size), limit)
        var data = Data(count: length)
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            var offset = 0
            while offset < length {
                let got = systemRead(fd, buffer.baseAddress.map { $0 + offset }, length - offset)
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { return false }
                offset += got
            }
            return true
        }
        return complete ? data : nil
    }

    /// The file's length and modification time, `nil` when it is not a regular file.
    package static func status(_ path: String) -> (length: Int, modified: Double)? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return (Int(info.st_size), Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    /// The names in a directory (without `.` and `..`); empty when it cannot be read.
    package static func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    package static func remove(_ path: String) {
        unlink(path)
    }
}

/// `read(2)`, named apart from ``DiskFiles/read(_:upTo:)``.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}
