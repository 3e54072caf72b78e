import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// The error of a batch member the batch's deadline stopped names that member's request.
@Suite("Batch deadline errors name their request", .timeLimit(.minutes(1)))
struct BatchDeadlineSummaryTests {
    /// A member in flight when the deadline passes and a member that never started each fail with
    /// `.totalTimeout` carrying their own request (method and URL, secrets redacted); they had no
    /// request, so callers could tell them apart only by index.
    @Test func aMemberStoppedByTheDeadlineCarriesItsRequest() async throws {
        try await withLoopback(handler: { request in
            if request.path.hasPrefix("/hold") { await request.connection.closed() }
            return .text("done")
        }) { server, client, _ in
            let members = ["item/0", "hold/1", "item/2"].enumerated().map { index, path in
                Send(path: path, query: [URLQueryItem(name: "token", value: "s3cret"), URLQueryItem(name: "n", value: String(index))])
            }
            let batch = await client.batch(members, options: BatchOptions(maximumConcurrency: 1, deadline: .seconds(1)))
            #expect(batch.results.count == 3)
            #expect((try? batch.results[0].get()) == "done")
            for (index, path) in [(1, "hold/1"), (2, "item/2")] {
                guard case .failure(let error as CurlewError) = batch.results[index] else {
                    Issue.record("member \(index) should have timed out, got \(batch.results[index])")
                    continue
                }
                #expect(error.code == .totalTimeout)
                #expect(error.stage == .deadline)
                #expect(error.request?.description == "GET \(server.baseURL)/\(path)?token=<redacted>&n=\(index)")
            }
            // The third never started: the second held the only slot until the deadline.
            #expect(server.requests(path: "/item/2").isEmpty)
        }
    }
}
