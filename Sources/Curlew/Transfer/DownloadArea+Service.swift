public import ServiceLifecycle

extension DownloadArea: Service {
    /// How often ``run()`` sweeps: half the ``lifetime``, at least a second and at most five
    /// minutes, so an expired file outlives its lifetime by at most that much.
    public var sweepInterval: Duration {
        min(max(lifetime / 2, .seconds(1)), .seconds(300))
    }

    /// Sweeps the area every ``sweepInterval`` until graceful shutdown or cancellation, so that
    /// expired files go even when no download starts (without it, an area is swept only when a
    /// download into it starts, or when you call ``sweep(now:)``). Add the area to the
    /// application's `ServiceGroup`, or run it in a task of its own.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                self.sweep()
                try? await CallDeadline.sleep(for: self.sweepInterval)
            }
        }
    }
}
