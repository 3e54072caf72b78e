public import Foundation
internal import Synchronization
#if canImport(Glibc)
    internal import Glibc
#endif

/// A managed folder for downloads that have no destination: each file is
/// deleted once it is older than ``lifetime`` — move it somewhere else to keep it.
///
/// The folder is created with mode 0700 and must be a real directory owned by this user (a
/// symbolic link or another user's folder is refused). Sweeping happens when a download into the
/// area starts, when you call ``sweep(now:)``, and every ``sweepInterval`` while the area runs as
/// a service (``run()``, e.g. in the application's `ServiceGroup`); the ``shared`` area is also
/// swept in the background whenever an ``APIClient`` is created, so a program that neither runs
/// the service nor downloads again does not keep expired files (at most once per
/// ``sweepInterval``, however many clients it creates). A file being written is never swept.
///
/// ```swift
/// let area = DownloadArea(directory: URL(fileURLWithPath: "/var/cache/app/downloads"), lifetime: .seconds(600))
/// var options = DownloadOptions()
/// options.area = area
/// let file = try await client.download(ReportRequest(), options: options)   // lands in the area
/// try FileManager.default.moveItem(at: file.url, to: keep)                 // or it will be swept
/// ```
public final class DownloadArea: Sendable {
    /// The folder.
    public let directory: URL
    /// How long a finished file stays.
    public let lifetime: Duration
    /// Paths being written now (never swept). Guarded by its mutex.
    private let inUse = Mutex<[String: Int]>([:])

    /// The process-wide area: `curlew-downloads-<uid>` in the temporary directory, files kept
    /// for one hour.
    public static let shared = DownloadArea(
        directory: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("curlew-downloads-\(getuid())", isDirectory: true),
        lifetime: .seconds(3600))

    /// Creates an area; the folder is created when first used. A `lifetime` of zero or less is
    /// refused: a download into the area fails unsent with
    /// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings`` (its file would be swept as soon as
    /// it was finished).
    public init(directory: URL, lifetime: Duration) {
        self.directory = directory
        self.lifetime = lifetime
    }

    /// Creates the folder if needed (mode 0700) and checks it is a directory of this user that is
    /// not a symbolic link.
    /// - Throws: `.fileNotWritable` otherwise; `.invalidConnectionSettings` for a lifetime of zero
    ///   or less.
    func prepare() throws(CurlewError) {
        if lifetime <= .zero { throw .refusedSetting("DownloadArea.lifetime", "longer than zero", "\(lifetime)", request: nil) }
        let path = directory.path
        if mkdir(path, 0o700) != 0, errno != EEXIST {
            throw CurlewError(code: .fileNotWritable, message: "could not create the download area \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o022 == 0 else {
            throw CurlewError(code: .fileNotWritable, message: "the download area \(path) is not a private directory of this user")
        }
    }

    /// Marks `path` in use until ``release(_:)``.
    func retain(_ path: String) { inUse.withLock { $0[path, default: 0] += 1 } }

    /// Ends one use of `path`.
    func release(_ path: String) {
        inUse.withLock { table in
            let count = (table[path] ?? 1) - 1
            table[path] = count > 0 ? count : nil
        }
    }

    /// When ``sweepInBackground()`` last started a sweep. Guarded by its mutex.
    let lastBackgroundSweep = Mutex<ContinuousClock.Instant?>(nil)

    /// Starts a ``sweep(now:)`` on a background task (a client's start sweeps ``shared`` so),
    /// unless one started within the last ``sweepInterval``: a program that creates many clients
    /// does not list the folder for each.
    func sweepInBackground() {
        let now = ContinuousClock.now
        let due = lastBackgroundSweep.withLock { last in
            if let last, now - last < sweepInterval { return false }
            last = now
            return true
        }
        guard due else { return }
        Task.detached(priority: .background) { [self] in
            self.sweep()
        }
    }

    /// Deletes the regular files older than ``lifetime`` (by modification time) except those in
    /// use (being written, or a partial file being resumed — by this process, or by another whose
    /// resumable download holds the files' lock); returns how many were deleted.
    @discardableResult
    public func sweep(now: Date = Date()) -> Int {
        let path = directory.path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return 0 }
        let busy = inUse.withLock { Set($0.keys) }
        let (seconds, attoseconds) = lifetime.components
        let limit = Double(seconds) + Double(attoseconds) / 1e18
        var removed = 0
        // Whether another process's resumable download holds the lock of a key, asked once per key.
        var lockedKeys: [Substring: Bool] = [:]
        for name in names {
            let file = path + "/" + name
            guard !busy.contains(file) else { continue }
            var info = stat()
            guard lstat(file, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            let modified = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
            guard now.timeIntervalSince1970 - modified >= limit else { continue }
            if let key = Self.resumableKey(name) {
                let locked = lockedKeys[key] ?? Self.isLocked(path + "/.curlew-\(key).curlew-lock")
                lockedKeys[key] = locked
                if locked { continue }
            }
            if unlink(file) == 0 { removed += 1 }
        }
        return removed
    }

    /// The key of a resumable download's partial file, resume record or lock
    /// (`.curlew-<key>.curlew-partial`), `nil` for any other name.
    private static func resumableKey(_ name: String) -> Substring? {
        guard name.hasPrefix(".curlew-") else { return nil }
        for suffix in [".curlew-partial", ".curlew-resume", ".curlew-lock"] where name.hasSuffix(suffix) {
            return name.dropFirst(".curlew-".count).dropLast(suffix.count)
        }
        return nil
    }

    /// Whether a download (of any process) holds the lock at `path` (``PartialFileLock``). Asked
    /// with a shared lock taken and dropped at once; a download that starts in that instant
    /// finds its lock taken and fails with `.downloadInProgress`, as it would beside a running one.
    private static func isLocked(_ path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var result: Int32
        repeat { result = flock(descriptor, LOCK_SH | LOCK_NB) } while result != 0 && errno == EINTR
        return result != 0
    }
}
