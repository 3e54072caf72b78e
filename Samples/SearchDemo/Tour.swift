import Curlew
import Foundation

/// One stop of the tour. Later capabilities add their own steps to ``Tour/steps``.
protocol TourStep: Sendable {
    /// A short heading printed before the step runs.
    var title: String { get }
    /// Runs the step, printing what happens.
    func run(with client: APIClient) async throws
}

/// The guided tour: each step runs in order; a failing step is reported and the tour goes on.
struct Tour {
    static let steps: [any TourStep] = main + fleet

    #if canImport(CurlewFleet)
        static let fleet: [any TourStep] = [FleetStep()]
    #else
        static let fleet: [any TourStep] = []
    #endif

    static let main: [any TourStep] = [
        SearchStep(),
        MediaSearchStep(),
        DetailsStep(),
        DownloadStep(),
        ConcurrentStep(),
        ErrorsStep(),
        QueuedDownloadsStep(),
        BatchStep(),
        ChainStep(),
        SigningStep(),
        EnvelopeStep(),
        TokenRefreshStep(),
        ServerClockStep(),
        FailoverStep(),
        EventsStep(),
        StreamingStep(),
        CredentialsStayHomeStep(),
        FixtureMockStep(),
        GeneratedMockStep(),
        CacheStep(),
        FilesStep(),
        ObservabilityStep(),
        ResilienceStep(),
        OpenAPIStep(),
    ]

    let client: APIClient

    /// Runs every step; returns how many failed.
    func run() async -> Int {
        var failures = 0
        for (number, step) in Self.steps.enumerated() {
            print("\n\(number + 1). \(step.title)")
            do {
                try await step.run(with: client)
            } catch {
                failures += 1
                print("   ✗ step failed: \(error)")
            }
        }
        return failures
    }
}

/// Prints an indented line of the tour.
func say(_ text: String) {
    print("   " + text)
}
