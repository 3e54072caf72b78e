import Foundation
import FuzzSupport
import HTTPTypes
@testable import Curlew
@testable import CurlewCore

/// Input: a response body. Reads it through a `{code, msg, data}` envelope and a nested one, the
/// way the innermost middleware does; every failure must be a `CurlewError` at the envelope stage.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let body = start.map { Data(bytes: $0, count: count) } ?? Data()
    let raw = RawResponse(status: .ok, body: body, url: "https://example.com/envelope")
    let summary = RequestSummary(method: .get, url: "https://example.com/envelope")
    let envelopes = [
        ResponseEnvelope(codePath: "code", messagePath: "msg", payloadPath: "data", successCodes: ["0", "200"]),
        ResponseEnvelope(codePath: "resp.status", messagePath: nil, payloadPath: "resp.data.items[1]", successCodes: ["true", "ok"]),
    ]
    for envelope in envelopes {
        let reader = EnvelopeReader(envelope: envelope)
        do {
            let checked = try reader.verify(raw, summary: summary)
            fuzzCheck(checked.businessCode != nil, "verified without a business code")
            let payload = try reader.payload(of: checked, summary: summary)
            fuzzCheck(payload.body.count <= body.count, "payload longer than the body")
            var error = CurlewError(code: .decodingFailed, message: "<root>: x", dataPath: nil)
            EnvelopeReader.prefix(&error, with: envelope.payloadPath, raw: raw)
        } catch {
            fuzzCheck(error.stage == .envelope, "an envelope failure at stage \(String(describing: error.stage))")
        }
    }
    if let value = try? JSONValue(jsonData: body) {
        _ = EnvelopeReader.text(of: value)
    }
    return 0
}

runFuzzer(fuzzEnvelope)
