package import Testing

/// Runs a test — or every test of a suite — as a high-priority task, for tests whose outcome
/// depends on when things happen: idle timeouts, deadlines, soft timeouts, hedges.
///
/// The whole suite shares Swift's cooperative pool, one thread per core. On a two-core machine
/// the first minute of a full run queues thousands of jobs there, and a default-priority job
/// waits its turn for seconds (up to 8 s was measured, the pool's queue behind a watchdog's
/// job). A test that waits for an idle connection to close after 8 s, or for a background
/// revalidation within 10 s, then fails for the machine's load, not for its behaviour. The pool
/// takes higher-priority jobs first, and the priority carries over to everything the test awaits:
/// its child and unstructured tasks, the actors it calls (escalated), and the continuations the
/// engine thread resumes. Most of the suite stays at the default priority, so the few tests that
/// carry this trait keep their place at the head of the queue.
package struct TimingSensitiveTrait: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // The group waits for its one child, so `function` does not outlive this call.
        try await withoutActuallyEscaping(function) { function in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(priority: .high) { try await function() }
                try await group.waitForAll()
            }
        }
    }
}

extension Trait where Self == TimingSensitiveTrait {
    /// Runs the test (or the suite's tests) at high priority: see ``TimingSensitiveTrait``.
    package static var timingSensitive: Self { Self() }
}
