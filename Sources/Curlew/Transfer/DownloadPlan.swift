internal import Crypto
internal import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// Where one download writes and lands: the destination folder, the fixed file name (for a file
/// URL) or none (a folder: the name comes from the answer), the partial file beside it and the
/// resume record.
struct DownloadPlan: Sendable {
    /// The folder the file lands in.
    var directory: String
    /// The final name when the destination is a file URL; `nil` for a folder.
    var fixedName: String?
    /// The partial file.
    var partialPath: String
    /// The resume record (resumable downloads only).
    var recordPath: String?
    /// The lock file guarding the partial file (resumable downloads only; ``PartialFileLock``).
    var lockPath: String?
    /// The managed area, when there was no destination.
    var area: DownloadArea?

    /// Resolves `destination` (a folder when it is an existing directory or its URL ends with
    /// `/`; `nil` for the managed area).
    /// - Throws: `.destinationExists` for an existing file without ``DownloadOptions/replacesExisting``,
    ///   `.fileNotWritable` for a folder that does not exist.
    init(destination: URL?, url: String, options: DownloadOptions) throws(CurlewError) {
        // Refused rather than clamped (the stall detector would otherwise fire after a second,
        // or count any trickle as progress).
        if let stall = options.stallTimeout, stall <= .zero {
            throw .refusedSetting("DownloadOptions.stallTimeout", "longer than zero (nil turns the stall detector off)", "\(stall)", request: nil)
        }
        if let stall = options.stallTimeout, stall > EasyHandleOptions.longestDuration {
            throw .refusedSetting("DownloadOptions.stallTimeout", "at most 365 days (nil turns the stall detector off)", "\(stall)", request: nil)
        }
        if options.minimumSpeed < 1 {
            throw .refusedSetting("DownloadOptions.minimumSpeed", "at least 1 byte a second", "\(options.minimumSpeed)", request: nil)
        }
        if let limit = options.maximumFileSize, limit < 0 {
            throw .refusedSetting("DownloadOptions.maximumFileSize", "zero or more bytes (nil means no limit)", "\(limit)", request: nil)
        }
        var fixedName: String?
        if let destination {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory)
            if destination.hasDirectoryPath || (exists && isDirectory.boolValue) {
                directory = destination.path
            } else {
                directory = destination.deletingLastPathComponent().path
                fixedName = destination.lastPathComponent
                var info = stat()
                if !options.replacesExisting, lstat(destination.path, &info) == 0 {
                    throw CurlewError(code: .destinationExists, message: "\(destination.path) already exists")
                }
            }
            area = nil
        } else {
            try options.area.prepare()
            directory = options.area.directory.path
            area = options.area
        }
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CurlewError(code: .fileNotWritable, message: "the destination folder \(directory) does not exist")
        }
        self.fixedName = fixedName
        if options.resumable {
            // One partial file per URL and destination, found again after a restart.
            let digest = SHA256.hash(data: Data((url + "\n" + (fixedName ?? "")).utf8))
            let key = digest.prefix(12).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            partialPath = directory + "/.curlew-\(key).curlew-partial"
            recordPath = directory + "/.curlew-\(key).curlew-resume"
            lockPath = directory + "/.curlew-\(key).curlew-lock"
        } else {
            partialPath = directory + "/.curlew-\(UUID().uuidString.lowercased()).curlew-tmp"
            recordPath = nil
            lockPath = nil
        }
    }

    /// Moves the complete partial file to its final place: `name` in ``directory``. Without
    /// `replacing`, an existing file is never overwritten (a hard link fails atomically when the
    /// name is taken, and does not follow a symbolic link planted there); in a folder, a taken
    /// name gets a ` (n)` suffix.
    /// - Returns: The final path.
    func place(named name: String, replacing: Bool) throws(CurlewError) -> String {
        if replacing {
            let path = directory + "/" + name
            guard rename(partialPath, path) == 0 else {
                throw CurlewError(code: .fileNotWritable, message: "could not move the download to \(path): \(String(cString: strerror(errno)))")
            }
            return path
        }
        for index in 0..<1000 {
            let path = directory + "/" + Self.numbered(name, index)
            if link(partialPath, path) == 0 {
                unlink(partialPath)
                return path
            }
            let reason = errno
            guard reason == EEXIST else {
                throw CurlewError(code: .fileNotWritable, message: "could not move the download to \(path): \(String(cString: strerror(reason)))")
            }
            if fixedName != nil {
                throw CurlewError(code: .destinationExists, message: "\(path) already exists")
            }
        }
        throw CurlewError(code: .destinationExists, message: "no free name for \(name) in \(directory)")
    }

    /// `report.pdf`, `report (1).pdf`, `report (2).pdf`…
    static func numbered(_ name: String, _ index: Int) -> String {
        guard index > 0 else { return name }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot]) (\(index))\(name[dot...])"
        }
        return "\(name) (\(index))"
    }

    /// Removes the partial file and its record.
    func discardPartial() {
        unlink(partialPath)
        if let recordPath { unlink(recordPath) }
    }

    /// The size of the partial file when it is a regular file (not a link), else `nil`.
    var partialSize: Int64? {
        var info = stat()
        guard lstat(partialPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Int64(info.st_size)
    }
}

extension String {
    /// The string with leading zeros up to `width` characters.
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
