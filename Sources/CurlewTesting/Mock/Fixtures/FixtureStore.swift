public import Curlew
public import Foundation
internal import HTTPTypes

/// A directory of fixture files, one per request type, read by ``MockMode/fixtures(_:name:)``.
///
/// ```
/// Fixtures/
///   SearchRequest.json              the default answer's body
///   SearchRequest.empty.json        scenario "empty"
///   SearchRequest.error.meta.json   scenario "error": metadata only (status 500, or a failure)
///   SearchRequest.slow.json         scenario "slow"…
///   SearchRequest.slow.meta.json    …with its metadata: {"delayMilliseconds": 1500}
/// ```
///
/// A fixture is `<Name>.json` or `<Name>.<scenario>.json`, where `Name` is the request type's
/// name (`String(describing:)`), with optional sidecar metadata `<same>.meta.json` giving
/// `status`, `headers`, `delayMilliseconds` and `error` (a transport failure to simulate). Without
/// metadata the answer is `200` with `Content-Type: application/json`.
///
/// Names and scenarios that could leave the directory (`../`, `%2e%2e%2f`, absolute paths, NUL)
/// are rejected with `.fixturePathRejected` before any path is built, and a file that resolves
/// outside the directory (a symbolic link) is rejected the same way. A missing fixture is
/// `.fixtureNotFound` naming the file — never a fallback to the network or to another fixture.
public struct FixtureStore: Sendable {
    /// The directory's resolved real path.
    public let directory: String

    /// A store reading from a directory.
    /// - Throws: `.fixtureNotFound` when the directory does not exist.
    public init(directory: String) throws(CurlewError) {
        self.directory = try FixturePath.directory(directory)
    }

    /// A store reading from a folder of a resource bundle, e.g. a test target's
    /// `resources: [.copy("Fixtures")]` read with `Bundle.module`.
    /// - Throws: `.fixtureNotFound` when the bundle has no such folder.
    public init(bundle: Bundle, subdirectory: String = "Fixtures") throws(CurlewError) {
        try FixtureName.check(subdirectory, what: "folder")
        let root = bundle.resourceURL ?? bundle.bundleURL
        try self.init(directory: root.appendingPathComponent(subdirectory).path)
    }

    /// The body file name for a request type name and scenario: `SearchRequest.empty.json`.
    /// - Throws: `.fixturePathRejected` for a name or scenario that could leave the directory.
    public func fileName(for name: String, scenario: String? = nil) throws(CurlewError) -> String {
        try FixtureName.file(for: name, scenario: scenario)
    }

    /// The full path a fixture is (or would be) at, after checking the name.
    public func path(for name: String, scenario: String? = nil) throws(CurlewError) -> String {
        directory + "/" + (try fileName(for: name, scenario: scenario))
    }

    /// Loads the answer for a request type name and scenario.
    /// - Throws: `.fixturePathRejected`, `.fixtureNotFound` (naming the file looked for) or
    ///   `.fixtureInvalid`.
    public func answer(for name: String, scenario: String? = nil) throws(CurlewError) -> MockAnswer {
        let bodyName = try fileName(for: name, scenario: scenario)
        let metaName = FixtureName.metadataFile(forBody: bodyName)
        let bodyEntry = try FixturePath.entry(bodyName, in: directory)
        let metaEntry = try FixturePath.entry(metaName, in: directory)
        var answer = MockAnswer(name: bodyName)
        switch (bodyEntry, metaEntry) {
        case (.missing, .missing):
            throw CurlewError(code: .fixtureNotFound, message: "no fixture \(bodyName) (nor \(metaName)) in \(directory)")
        case (.file(let path), _):
            answer.body = try FixturePath.read(path, name: bodyName)
            answer.headers = [.contentType: "application/json"]
        case (.missing, .file):
            // Metadata only (a status, a failure): the answer is named by the file that exists.
            answer.name = metaName
        }
        if case .file(let path) = metaEntry {
            let metadata = try FixtureMetadata(try FixturePath.read(path, name: metaName), file: metaName)
            if let status = metadata.status { answer.status = status }
            for field in metadata.headers {
                answer.headers[field.name] = field.value
            }
            answer.delay = metadata.delay
            answer.failure = metadata.failure
        }
        return answer
    }
}
