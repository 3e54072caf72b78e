internal import Foundation

/// The stage after the whole middleware chain, run once on whatever bytes came back (network,
/// cache, fixture): status and envelope (again only if no inner check saw these bytes), the
/// payload, ``Endpoint/didReceive(_:)``, ``Endpoint/decode(_:decoder:)``.
struct ResponseDecoding<R: Endpoint> {
    let request: R
    let summary: RequestSummary
    let decoder: JSONDecoder

    func decode(_ raw: RawResponse) throws(CurlewError) -> APIResponse<R.Response> {
        guard request.accepts(raw.status) else { throw ResponseStatus.error(raw, summary: summary) }
        guard let envelope = request.envelope else {
            return APIResponse(value: try value(from: raw), raw: raw)
        }
        let reader = EnvelopeReader(envelope: envelope)
        let checked = raw.businessCode == nil ? try reader.verify(raw, summary: summary) : raw
        let payload = try reader.payload(of: checked, summary: summary)
        do {
            return APIResponse(value: try value(from: payload), raw: checked)
        } catch var error where error.level == .dataFormat {
            EnvelopeReader.prefix(&error, with: envelope.payloadPath, raw: checked)
            throw error
        }
    }

    private func value(from raw: RawResponse) throws(CurlewError) -> R.Response {
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

    private func staged(_ error: CurlewError, _ stage: CurlewError.Stage) -> CurlewError {
        var error = error
        if error.stage == nil { error.stage = stage }
        return error
    }
}
