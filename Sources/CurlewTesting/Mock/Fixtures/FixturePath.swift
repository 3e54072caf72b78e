import Curlew
internal import Foundation
#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Resolves a file inside a fixture directory, refusing anything that resolves outside it.
///
/// The check compares path *components* after resolving symbolic links (`realpath`), never a
/// string prefix: `fixtures-evil/x.json` is outside `fixtures/`.
enum FixturePath {
    /// What lies at a name inside the directory.
    enum Entry {
        case missing
        case file(path: String)
    }

    /// The real path of a directory.
    /// - Throws: `.fixtureNotFound` when it does not exist or is not a directory.
    static func directory(_ path: String) throws(CurlewError) -> String {
        guard let real = realPath(path) else {
            throw CurlewError(code: .fixtureNotFound, message: "the fixture directory \(path) does not exist")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: real, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CurlewError(code: .fixtureNotFound, message: "the fixture directory \(path) is not a directory")
        }
        return real
    }

    /// The file `name` (already checked by ``FixtureName``) inside `directory` (a real path).
    /// - Throws: `.fixturePathRejected` when it resolves outside the directory or is a dangling
    ///   link; `.fixtureInvalid` when it is not a regular file.
    static func entry(_ name: String, in directory: String) throws(CurlewError) -> Entry {
        let candidate = directory + "/" + name
        var info = stat()
        guard lstat(candidate, &info) == 0 else { return .missing }
        guard let real = realPath(candidate) else {
            throw CurlewError(code: .fixturePathRejected, message: "the fixture \(name) is a link that leads nowhere")
        }
        let inside = components(of: directory)
        let resolved = components(of: real)
        guard resolved.count > inside.count, Array(resolved.prefix(inside.count)) == inside else {
            throw CurlewError(code: .fixturePathRejected, message: "the fixture \(name) resolves outside the fixture directory \(directory)")
        }
        guard stat(real, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw CurlewError(code: .fixtureInvalid, message: "the fixture \(name) is not a regular file")
        }
        return .file(path: real)
    }

    /// Reads a resolved fixture file (at most 64 MiB).
    static func read(_ path: String, name: String) throws(CurlewError) -> Data {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw CurlewError(code: .fixtureInvalid, message: "the fixture \(name) could not be read: \(error)", underlying: error)
        }
        defer { try? handle.close() }
        let limit = 64 << 20
        let data: Data
        do {
            data = try handle.read(upToCount: limit + 1) ?? Data()
        } catch {
            throw CurlewError(code: .fixtureInvalid, message: "the fixture \(name) could not be read: \(error)", underlying: error)
        }
        guard data.count <= limit else {
            throw CurlewError(code: .fixtureInvalid, message: "the fixture \(name) is larger than 64 MiB")
        }
        return data
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private static func components(of path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }
}
