internal import Foundation

/// A request's parameters, encoded: the filled path, extra query items, headers and body.
struct EncodedParameters {
    var path: String
    var query: [URLQueryItem] = []
    var headers: [(key: String, value: String)] = []
    var body: (data: Data, contentType: String)?
}

extension APIClient {
    /// Collects the request's declared parameters and encodes them with one ``ParameterEncoder``.
    /// - Throws: `.invalidPath` for path template problems, `.encodingFailed` otherwise.
    nonisolated func encodeParameters<R: Endpoint>(of request: R) throws(CurlewError) -> EncodedParameters {
        let parameters = ParameterCollector.collect(request)
        // Built only when an error needs it: most requests never show their summary.
        var summary: RequestSummary {
            RequestSummary(
                method: request.method, url: RequestURLBuilder.visible((configuration.baseURL ?? "") + request.path),
                secretKeyFragments: configuration.secretQueryKeyFragments)
        }
        if parameters.isEmpty {
            // A `{name}` with no @Path value is a mistake, not a literal: nothing is sent.
            if let name = PathTemplate.firstPlaceholder(in: request.path) {
                throw CurlewError(code: .invalidPath, message: "the path placeholder {\(name)} has no @Path value", request: summary)
            }
            return EncodedParameters(path: request.path)
        }

        let encoder = ParameterEncoder(options: parameters.options)
        var encoded: EncodedParameters
        do {
            encoded = EncodedParameters(path: try PathTemplate.resolve(request.path, values: parameters.path, encoder: encoder))
        } catch {
            throw CurlewError(code: .invalidPath, message: error.description, request: summary, underlying: error)
        }
        do {
            encoded.query = try encoder.queryItems(parameters.query)
            for entry in parameters.headers {
                if let value = try encoder.scalarText(entry.value) {
                    encoded.headers.append((entry.name, value))
                } else if parameters.options.nilStyle != .omit {
                    // A header has no bare name: `.bareName` and `.emptyValue` both send it empty.
                    encoded.headers.append((entry.name, ""))
                }
            }
            if !parameters.fields.isEmpty {
                switch parameters.encoding {
                case .query:
                    encoded.query += try encoder.queryItems(parameters.fields)
                case .form:
                    let text = PercentEncoding.formEncoded(try encoder.queryItems(parameters.fields))
                    encoded.body = (Data(text.utf8), "application/x-www-form-urlencoded")
                case .json:
                    encoded.body = (try encoder.json(parameters.fields), "application/json")
                }
            }
        } catch {
            throw CurlewError(code: .encodingFailed, message: "a parameter could not be encoded: \(error.description)", request: summary, underlying: error)
        }
        return encoded
    }
}
