import Curlew
import Foundation
import HTTPTypes
import Testing

/// `APIResponse` shares its `RawResponse` instead of copying each field; these pin down that it
/// still behaves as a value.
@Suite("APIResponse value semantics")
struct APIResponseTests {
    private func raw(content: ResponseContent = .data(Data("abc".utf8))) -> RawResponse {
        var raw = RawResponse(
            status: .ok, headers: [.contentType: "text/plain"], content: content, url: "http://127.0.0.1/a",
            metrics: TransferMetrics(redirectCount: 2))
        raw.businessCode = "0"
        return raw
    }

    @Test func everyFieldReadsFromTheRawResponse() {
        let response = APIResponse(value: 7, raw: raw())
        #expect(response.value == 7)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "text/plain")
        #expect(response.body == Data("abc".utf8))
        #expect(response.url == "http://127.0.0.1/a")
        #expect(response.source == .network)
        #expect(response.businessCode == "0")
        #expect(response.businessMessage == nil)
        #expect(response.metrics?.redirectCount == 2)
    }

    @Test func changingTheResponseLeavesTheRawResponseAndOtherCopiesAlone() {
        let original = raw()
        let first = APIResponse(value: 1, raw: original)
        var second = first
        second.status = .created
        second.headers[.contentType] = "application/json"
        second.body = Data("xyz".utf8)
        second.url = "http://127.0.0.1/b"
        second.businessMessage = "ok"
        second.metrics = nil
        #expect(original.status == .ok && original.body == Data("abc".utf8) && original.metrics?.redirectCount == 2)
        #expect(first.status == .ok && first.headers[.contentType] == "text/plain" && first.url == "http://127.0.0.1/a")
        #expect(first.businessMessage == nil && first.metrics?.redirectCount == 2)
        #expect(second.raw.status == .created)
        #expect(second.raw.headers[.contentType] == "application/json")
        #expect(second.raw.body == Data("xyz".utf8))
        #expect(second.raw.url == "http://127.0.0.1/b")
        #expect(second.raw.businessMessage == "ok" && second.raw.businessCode == "0")
        #expect(second.raw.metrics == nil)
    }

    @Test func aBodyWrittenToAFileReadsAsEmpty() {
        let response = APIResponse(value: URL(fileURLWithPath: "/tmp/x"), raw: raw(content: .file(path: "/tmp/x", length: 3)))
        #expect(response.body.isEmpty)
        guard case .data(let data) = response.raw.content else {
            Issue.record("raw content is not .data: \(response.raw.content)")
            return
        }
        #expect(data.isEmpty)
        #expect(response.raw.status == .ok)
    }
}
