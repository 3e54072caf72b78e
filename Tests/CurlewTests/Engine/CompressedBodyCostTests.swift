import Curlew
import Foundation
import Testing

/// A measurement harness, not a check: runs only with `CURLEW_COST_REQUESTS=N` set, sending N
/// sequential GETs of a small uncompressed answer (nginx's `/conn`, `CURLEW_COST_URL`) through
/// one transport, so that callgrind can count instructions per request with N and 3N requests
/// (what the content decoder costs a response that is not compressed; see CHANGELOG, hardening).
@Suite("Compressed bodies: cost harness")
struct CompressedBodyCostTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["CURLEW_COST_REQUESTS"] != nil))
    func uncompressedRequests() async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = try #require(environment["CURLEW_COST_REQUESTS"].flatMap { Int($0) })
        let url = try #require(environment["CURLEW_COST_URL"])
        try await withTransport { transport in
            let request = PreparedRequest(method: .get, url: url, options: http1Options())
            for _ in 0..<count {
                let response = try await transport.send(request)
                #expect(response.status.code == 200)
            }
        }
    }
}
