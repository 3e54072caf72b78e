import Foundation
import TestSupport
import Testing

@Suite("Removed endpoint properties: the compiler's warning")
struct RemovedEndpointPropertyWarningTests {
    /// An endpoint declaring `queueName`, `requiresAuthentication`, `usesAccessories`,
    /// `middleware` or `skippedMiddleware` with its old type (in the type or in its family's
    /// protocol extension) compiles with a warning saying where the setting went, one per
    /// property; an endpoint declaring none gets none. The script type-checks a probe against the
    /// built module.
    @Test func eachOldDeclarationWarnsAtItsConformance() async throws {
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
            path: "/usr/bin/env", arguments: ["bash", repository.appendingPathComponent("scripts/check-removed-property-warnings.sh").path, scratch.path])
        #expect(status == 0, "\(text)")
        let warned = text.split(separator: "\n").filter { $0.hasSuffix(": warned") }.map { String($0.dropLast(": warned".count)) }
        #expect(
            warned == [
                "_QueueName (Optional<String>)", "_RequiresAuthentication (Bool)", "_UsesAccessories (Bool)", "_Middleware (Array<any APIMiddleware>)",
                "_SkippedMiddleware (Set<MiddlewareKind>)", "_QueueName (String)",
            ])
    }
}
