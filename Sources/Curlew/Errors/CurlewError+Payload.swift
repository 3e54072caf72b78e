public import Foundation
internal import HTTPTypes

extension CurlewError {
    /// The error's response body, or the part at `keyPath`, decoded as `T`: the typed error
    /// payload of an envelope (`{"code": 4001, "msg": "…", "data": {"field": "email"}}`) or of an
    /// HTTP error body (a problem document).
    ///
    /// ```swift
    /// struct SignupProblem: Decodable { var field: String; var reason: String }
    /// do { try await client.send(Signup(email: email)) }
    /// catch let error as CurlewError where error.businessCode == "4001" {
    ///     let problem = try error.payload(SignupProblem.self, at: "data")
    /// }
    /// ```
    /// - Throws: `.decodingFailed` when the error has no response body or it does not decode,
    ///   with the JSON path of the mismatch.
    public func payload<T: Decodable>(_ type: T.Type, at keyPath: String? = nil, decoder: JSONDecoder = JSONDecoder()) throws(CurlewError) -> T {
        guard let body = responseBody, !body.isEmpty else {
            throw CurlewError(code: .decodingFailed, message: "the error has no response body to decode \(T.self) from", request: request)
        }
        return try RawResponse(status: status ?? .ok, body: body, url: "").decode(T.self, at: keyPath, decoder: decoder)
    }
}
