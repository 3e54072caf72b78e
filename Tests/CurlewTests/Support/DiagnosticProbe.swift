import Foundation
import TestSupport
import Testing

/// Runs one of the scripts that type-check a probe file against the built Curlew module
/// (`scripts/check-*-diagnostics.sh`, `scripts/check-removed-property-warnings.sh`) and returns
/// its exit status and output. The scratch path is found from the test binary, which lives in
/// `<scratch>/<triple>/debug/…`.
func runDiagnosticProbe(_ script: String) async throws -> (status: Int32, output: String) {
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while directory.lastPathComponent != "debug", directory.path != "/" { directory.deleteLastPathComponent() }
    let scratch = directory.deletingLastPathComponent().deletingLastPathComponent()
    try #require(
        FileManager.default.fileExists(atPath: scratch.appendingPathComponent("debug/Modules/Curlew.swiftmodule").path),
        "no built Curlew module under \(scratch.path)")
    // posix_spawn, not Foundation's Process (see SpawnedProcess).
    return try await SpawnedProcess.run(
        path: "/usr/bin/env", arguments: ["bash", repository.appendingPathComponent("scripts/\(script)").path, scratch.path])
}
