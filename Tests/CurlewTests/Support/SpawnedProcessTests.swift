import Foundation
import TestSupport
import Testing

/// The test suite's own child-process helper.
@Suite("Spawned processes", .timeLimit(.minutes(1)))
struct SpawnedProcessTests {
    /// Swift's threads block `SIGTERM`; a child used to inherit that mask, and `terminate()` did
    /// not end it (a stuck child outlived its test). The spawning thread blocks `SIGTERM` here
    /// on purpose.
    @Test func terminateEndsAChildEvenWhenTheSpawningThreadBlocksSIGTERM() async throws {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGTERM)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        let spawned = Result { try SpawnedProcess(path: "/bin/sleep", arguments: ["30"]) }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        let child = try spawned.get()
        child.terminate()
        #expect(await child.termination() == .init(reason: .uncaughtSignal, status: SIGTERM))
    }

    /// A signal the test process ignores is at its default action in the child.
    @Test func aSignalTheParentIgnoresIsDefaultInTheChild() async throws {
        let previous = signal(SIGHUP, SIG_IGN)
        let spawned = Result { try SpawnedProcess(path: "/bin/sleep", arguments: ["30"]) }
        signal(SIGHUP, previous)
        let child = try spawned.get()
        #expect(child.kill(SIGHUP))
        #expect(await child.termination() == .init(reason: .uncaughtSignal, status: SIGHUP))
    }
}
