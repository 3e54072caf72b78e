import Testing

@Suite("Seeds: renamed wrapper without a default")
struct SeedWrapperDiagnosticTests {
    /// `@Header("X-Note") var note: String` (and @Query, @Field, @Path) must fail to compile with a
    /// message that says what to write; the script type-checks a probe against the built module.
    @Test func theCompilerErrorSaysWhatToWrite() async throws {
        let (status, text) = try await runDiagnosticProbe("check-wrapper-diagnostics.sh")
        #expect(status == 0, "\(text)")
        #expect(text.split(separator: "\n").filter { $0.hasSuffix("the error says what to write") }.count == 4)
    }
}
