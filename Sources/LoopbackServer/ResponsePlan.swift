import NIOHTTP1

/// Turns a ``ServerResponse`` into a response head for one particular request: framing headers,
/// keep-alive decision and whether a body goes on the wire.
struct ResponsePlan: Sendable {
    let version: HTTPVersion
    let isHeadRequest: Bool
    let requestKeepAlive: Bool

    struct Decision {
        var head: HTTPResponseHead
        /// Whether body bytes are written at all (not for HEAD requests, 1xx, 204 and 304).
        var sendsBody: Bool
        /// Whether the server closes the connection after this response.
        var closeConnection: Bool
    }

    func decide(for response: ServerResponse, serverClosing: Bool) -> Decision {
        let status = HTTPResponseStatus(statusCode: response.status)
        var headers = HTTPHeaders(response.headers.map { ($0.name, $0.value) })
        var keepAlive = requestKeepAlive && !serverClosing
        if headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "close" }) {
            keepAlive = false
        }
        let statusAllowsBody = status.mayHaveResponseBody

        switch response.body {
        case .bytes(let bytes):
            if statusAllowsBody, !headers.contains(name: "content-length"), !headers.contains(name: "transfer-encoding") {
                headers.add(name: "Content-Length", value: String(bytes.count))
            }
        case .stream:
            let isHTTP11 = version.major > 1 || (version.major == 1 && version.minor >= 1)
            if statusAllowsBody, !headers.contains(name: "content-length"), !isHTTP11 {
                // No chunked encoding before HTTP/1.1: the end of the body is the end of the connection.
                keepAlive = false
            }
        }

        if !headers.contains(name: "connection") {
            let isHTTP10 = version.major == 1 && version.minor == 0
            if !keepAlive, !isHTTP10 {
                headers.add(name: "Connection", value: "close")
            } else if keepAlive, isHTTP10 {
                headers.add(name: "Connection", value: "keep-alive")
            }
        }

        return Decision(
            head: HTTPResponseHead(version: version, status: status, headers: headers),
            sendsBody: statusAllowsBody && !isHeadRequest,
            closeConnection: !keepAlive
        )
    }
}
