import Curlew
import CurlewTesting
import Foundation
import Testing

@Suite("Testing kit")
struct TestingKitTests {
    @Test func expectationsPassOnAMatchingRequestAndListEveryMismatchOtherwise() async throws {
        let transport = MockTransport { .json(#"{"total": 0, "pictures": []}"#, for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        _ = try await client.send(MockSearch(key: "fog"))
        #expect(expectRequestCount(transport.requests, 1))
        #expect(expectRequest(transport.requests.first, method: .get, path: "/pictures/search", query: ["key": "fog"]))
        withKnownIssue {
            expectRequest(transport.requests.first, method: .post, query: ["key": "sunset"], headers: ["X-Trace": "1"])
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("query key: expected \"sunset\", found \"fog\"") && text.contains("header X-Trace: expected \"1\", found none")
                && text.contains("method: expected POST, found GET")
        }
        withKnownIssue {
            expectRequestCount(transport.requests, 2)
        }
        withKnownIssue {
            expectRequest(nil)
        }
    }

    @Test func jsonAndFormBodiesAreComparedAsValues() {
        let json = PreparedRequest(method: .post, url: "https://api.test/a", headers: [:], body: Data(#"{"b": 2, "a": [1]}"#.utf8))
        #expect(expectRequest(json, json: ["a": [1], "b": 2]))
        let form = PreparedRequest(method: .post, url: "https://api.test/a", headers: [:], body: Data("name=Ada+L&x=%26".utf8))
        #expect(expectRequest(form, form: ["name": "Ada L", "x": "&"]))
    }
}
