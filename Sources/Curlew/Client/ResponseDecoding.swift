internal import Foundation

/// The stage after the whole middleware chain, run once on whatever bytes came back (network,
/// cache, fixture): status and envelope (again only if no inner check saw these bytes), the
/// payload, ``Endpoint/didReceive(_:)``, ``Endpoint/decode(_:decoder:)``.
enum ResponseDecoding {
    /// Generic functions, not a generic type: no type metadata is instantiated per call.
    static func decode<R: Endpoint>(_ raw: RawResponse, of request: R, summary: RequestSummary, decoder: JSONDecoder) throws(CurlewError) -> APIResponse<R.Response> {
        guard request.accepts(raw.status) else { throw ResponseStatus.error(raw, summary: summary) }
        guard let envelope = request.envelope else {
            return APIResponse(value: try value(from: raw, of: request, summary: summary, decoder: decoder), raw: raw)
        }
        let reader = EnvelopeReader(envelope: envelope)
        let checked = raw.businessCode == nil ? try reader.verify(raw, summary: summary) : raw
        let payload = try reader.payload(of: checked, summary: summary)
        do {
            return APIResponse(value: try value(from: payload, of: request, summary: summary, decoder: decoder), raw: checked)
        } catch var error where error.level == .dataFormat {
            EnvelopeReader.prefix(&error, with: envelope.payloadPath, raw: checked)
            throw error
        }
    }

    private static func value<R: Endpoint>(from raw: RawResponse, of request: R, summary: RequestSummary, decoder: JSONDecoder) throws(CurlewError) -> R.Response {
        do {
            try request.didReceive(raw)
        } catch let error as CurlewError {
            throw staged(error.completed(request: summary, response: raw), .didReceive)
        } catch {
            throw staged(CurlewError(code: .serverError, message: "\(error)", underlying: error).completed(request: summary, response: raw), .didReceive)
        }
        do {
            return try request.decode(raw, decoder: decoder)
        } catch let error as CurlewError {
            throw staged(error.completed(request: summary, response: raw), .decoding)
        } catch let error as DecodingError {
            let explained = DecodingFailure(error, body: raw.body)
            throw staged(
                CurlewError(code: explained.code, message: explained.message, dataPath: explained.path, underlying: error)
                    .completed(request: summary, response: raw), .decoding)
        } catch {
            throw staged(CurlewError(code: .decodingFailed, message: "\(error)", underlying: error).completed(request: summary, response: raw), .decoding)
        }
    }

    private static func staged(_ error: CurlewError, _ stage: CurlewError.Stage) -> CurlewError {
        var error = error
        if error.stage == nil { error.stage = stage }
        return error
    }
}
