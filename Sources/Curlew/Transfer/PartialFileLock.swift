#if canImport(Glibc)
    internal import Glibc
#endif

/// An exclusive lock on a resumable download's partial file, held for the whole
/// ``APIClient/download(_:to:options:adjust:)`` call: a sidecar file
/// (`.curlew-<key>.curlew-lock` beside the partial file) locked with
/// `flock(LOCK_EX | LOCK_NB)`. `flock` locks belong to an open file description, so a second
/// download of the same URL to the same destination — in this process or in another one —
/// finds it held and fails with `.downloadInProgress` before it touches the partial file or
/// sends anything. The kernel drops the lock when the holder exits, also when it crashes.
///
/// The lock file is removed while still locked when the call ends. A waiter that opened the old
/// file before it was removed sees, after locking, that the name now points elsewhere (another
/// inode, or nothing) and opens the name again, so two holders never lock different files.
///
/// Not `Sendable`: one call owns it from ``acquire(at:)`` to ``release()``.
final class PartialFileLock {
    /// The lock file.
    let path: String
    /// The locked descriptor; `-1` after ``release()``.
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { release() }

    /// Creates (or opens) the lock file with `O_NOFOLLOW`, mode 0600, and locks it without waiting.
    /// - Throws: `.downloadInProgress` when another download holds it; `.fileNotWritable` when
    ///   the file cannot be created or is not a regular file.
    static func acquire(at path: String) throws(CurlewError) -> PartialFileLock {
        for _ in 0..<8 {
            let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw CurlewError(code: .fileNotWritable, message: "could not open the lock file \(path): \(String(cString: strerror(errno)))")
            }
            var result: Int32
            repeat { result = flock(descriptor, LOCK_EX | LOCK_NB) } while result != 0 && errno == EINTR
            if result != 0 {
                let reason = errno
                close(descriptor)
                if reason == EWOULDBLOCK {
                    throw CurlewError(
                        code: .downloadInProgress,
                        message: "another download is writing the partial file guarded by \(path)")
                }
                throw CurlewError(code: .fileNotWritable, message: "could not lock \(path): \(String(cString: strerror(reason)))")
            }
            var held = stat()
            var named = stat()
            guard fstat(descriptor, &held) == 0, (held.st_mode & S_IFMT) == S_IFREG else {
                close(descriptor)
                throw CurlewError(code: .fileNotWritable, message: "the lock file \(path) is not a regular file")
            }
            if lstat(path, &named) == 0, named.st_dev == held.st_dev, named.st_ino == held.st_ino {
                return PartialFileLock(path: path, descriptor: descriptor)
            }
            // The previous holder removed the file between our open and our lock: try the name again.
            close(descriptor)
        }
        throw CurlewError(code: .downloadInProgress, message: "the lock file \(path) keeps being replaced")
    }

    /// Removes the lock file and unlocks (once).
    func release() {
        guard descriptor >= 0 else { return }
        unlink(path)
        close(descriptor)
        descriptor = -1
    }
}
