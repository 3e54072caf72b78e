import TestSupport
import Testing

/// `.timingSensitive` (TestSupport) must really raise the priority of what a test awaits, or the
/// tests that carry it wait behind the rest of the suite again. (`Task.basePriority`: on Linux
/// `Task.currentPriority` reports the thread's, which the cooperative pool leaves at the default.)
@Suite("The timing-sensitive trait")
struct TimingSensitiveTraitTests {
    @Test(.timingSensitive) func aTestRunsAtHighPriorityAndSoDoItsTasks() async {
        #expect(Task.basePriority == .high)
        #expect(await Task { Task.basePriority }.value == .high, "an unstructured task inherits it")
        let child = await withTaskGroup(of: TaskPriority?.self) { group in
            group.addTask { Task.basePriority }
            return await group.next() ?? nil
        }
        #expect(child == .high, "so does a child task")
    }

    @Test func aTestWithoutItRunsAtTheDefaultPriority() {
        #expect(Task.basePriority.map { $0 < .high } ?? true)
    }
}
