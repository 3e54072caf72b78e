/// Runs work between accessory callbacks, and keeps members of a batch or chain quiet so the
/// group reports as one unit.
enum AccessoryScope {
    /// Set while the members of a batch or chain run.
    @TaskLocal static var insideGroup = false

    /// Reports `activity` to `accessories` around `work` (unless inside a group or empty). A
    /// `group` (a batch, a chain) keeps its members quiet whether or not it reports itself: their
    /// own accessories see the group, never one member.
    nonisolated(nonsending) static func run<T>(
        _ activity: @autoclosure () -> Activity,
        accessories: [any Accessory],
        group: Bool = false,
        isFailure: (T) -> (any Error)? = { _ in nil },
        _ work: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        guard !insideGroup else { return try await work() }
        guard !accessories.isEmpty else {
            guard group else { return try await work() }
            return try await $insideGroup.withValue(true) { try await work() }
        }
        let activity = activity()
        let started = ContinuousClock.now
        for accessory in accessories { accessory.willStart(activity) }
        let outcome: Result<Void, any Error>
        let result: Result<T, any Error>
        do {
            let value = try await $insideGroup.withValue(activity.kind != .request) { try await work() }
            result = .success(value)
            outcome = isFailure(value).map { .failure($0) } ?? .success(())
        } catch {
            result = .failure(error)
            outcome = .failure(error)
        }
        for accessory in accessories { accessory.willStop(activity, outcome: outcome) }
        let duration = ContinuousClock.now - started
        for accessory in accessories { accessory.didStop(activity, outcome: outcome, duration: duration) }
        return try result.get()
    }
}
