import Foundation
import TestSupport
import Testing

@Suite("Seeds: renamed wrapper without a default")
struct SeedWrapperDiagnosticTests {
    /// `@Header("X-Note") var note: String` (and @Query, @Field, @Path) must fail to compile with a
    /// message that says what to write; the script type-checks a probe against the built module.
    @Test func theCompilerErrorSaysWhatToWrite() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        // The test binary lives in <scratch>/<triple>/debug/…; the scratch path is above the triple.
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while directory.lastPathComponent != "debug", directory.path != "/" { directory.deleteLastPathComponent() }
        let scratch = directory.deletingLastPathComponent().deletingLastPathComponent()
        try #require(
            FileManager.default.fileExists(atPath: scratch.appendingPathComponent("debug/Modules/Curlew.swiftmodule").path),
            "no built Curlew module under \(scratch.path)")
        // posix_spawn, not Foundation's Process (see SpawnedProcess).
        let (status, text) = try await SpawnedProcess.run(
            path: "/usr/bin/env", arguments: ["bash", repository.appendingPathComponent("scripts/check-wrapper-diagnostics.sh").path, scratch.path])
        #expect(status == 0, "\(text)")
        #expect(text.split(separator: "\n").filter { $0.hasSuffix("the error says what to write") }.count == 4)
    }
}
