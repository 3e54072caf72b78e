import Testing

@Suite("Removed endpoint properties: the compiler's warning")
struct RemovedEndpointPropertyWarningTests {
    /// An endpoint declaring `queueName`, `requiresAuthentication`, `usesAccessories`,
    /// `middleware` or `skippedMiddleware` with its old type (in the type or in its family's
    /// protocol extension) compiles with a warning saying where the setting went, one per
    /// property; an endpoint declaring none gets none. The script type-checks a probe against the
    /// built module.
    @Test func eachOldDeclarationWarnsAtItsConformance() async throws {
        let (status, text) = try await runDiagnosticProbe("check-removed-property-warnings.sh")
        #expect(status == 0, "\(text)")
        let warned = text.split(separator: "\n").filter { $0.hasSuffix(": warned") }.map { String($0.dropLast(": warned".count)) }
        #expect(
            warned == [
                "_QueueName (Optional<String>)", "_RequiresAuthentication (Bool)", "_UsesAccessories (Bool)", "_Middleware (Array<any APIMiddleware>)",
                "_SkippedMiddleware (Set<MiddlewareKind>)", "_QueueName (String)",
            ])
    }
}
