internal import Foundation

// Every rendering of a Curlew value that can hold a secret goes through a redacted form:
// `dump()`, `String(reflecting:)` and the debugger read `customMirror`, so the types that store
// a raw URL, header values, a token or a signing secret show only what their `description`
// shows. Header values never appear; header names do.

extension CurlewError: CustomReflectable {
    /// The fields of ``/CurlewCore/CurlewError/description``, the header names and the body size; no raw URL, no header
    /// value, no response body, and for ``/CurlewCore/CurlewError/underlying`` only a ``/CurlewCore/CurlewError`` (itself redacted)
    /// or the wrapped error's type.
    public var customMirror: Mirror {
        var children: [(label: String?, value: Any)] = [
            ("code", code.description), ("level", level.rawValue), ("message", message),
        ]
        if let request { children.append(("request", request.description)) }
        if let stage { children.append(("stage", "\(stage)")) }
        if let status { children.append(("status", status.code)) }
        if let headers { children.append(("headerNames", headers.map(\.name.rawName))) }
        if let bodySnippet { children.append(("bodySnippet", bodySnippet)) }
        if let responseBody { children.append(("responseBodyBytes", responseBody.count)) }
        if let dataPath { children.append(("dataPath", dataPath)) }
        if let businessCode { children.append(("businessCode", businessCode)) }
        if let underlying {
            children.append(("underlying", underlying is CurlewError ? underlying : "\(type(of: underlying))"))
        }
        if !completedSteps.isEmpty { children.append(("completedSteps", completedSteps.count)) }
        return Mirror(self, children: children, displayStyle: .struct)
    }
}

extension RequestSummary: CustomReflectable, CustomDebugStringConvertible {
    /// The method and the redacted URL, never the URL as sent.
    public var customMirror: Mirror {
        Mirror(self, children: ["method": method.rawValue, "url": redactedURL], displayStyle: .struct)
    }

    /// Same as ``/CurlewCore/RequestSummary/description``.
    public var debugDescription: String { "RequestSummary(\(description))" }
}

extension PreparedRequest: CustomReflectable, CustomStringConvertible, CustomDebugStringConvertible {
    /// Method, redacted URL, header names (no values), the body's kind and the options.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "method": method.rawValue, "url": summary.redactedURL, "headerNames": headers.map(\.name.rawName),
                "body": content.map(Self.kind) ?? "none", "options": options,
            ], displayStyle: .struct)
    }

    /// `"POST https://host/path?token=<redacted> (3 headers, 12-byte body)"`.
    public var description: String {
        "\(summary) (\(headers.count) headers, \(content.map(Self.kind) ?? "no body"))"
    }

    /// Same as ``description``.
    public var debugDescription: String { "PreparedRequest(\(description))" }

    private static func kind(_ content: PreparedBody) -> String {
        switch content {
        case .data(let data): "\(data.count)-byte body"
        case .file(_, let length): "\(length)-byte file body"
        case .stream: "streamed body"
        }
    }
}

extension RawResponse: CustomReflectable {
    /// Status, header names (no values), the redacted URL, the source and the body size.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "status": status.code, "headerNames": headers.map(\.name.rawName),
                "url": RequestSummary.redact(url: url, secretKeyFragments: RequestSummary.defaultSecretKeyFragments),
                "source": "\(source)",
            ], displayStyle: .struct)
    }
}

extension TokenStore.Credential: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `"Credential(accessToken: <redacted>, refreshToken: <redacted>)"`: tokens are never shown.
    public var description: String {
        "Credential(accessToken: <redacted>, refreshToken: \(refreshToken == nil ? "nil" : "<redacted>"))"
    }

    /// Same as ``description``.
    public var debugDescription: String { description }

    /// No token, only whether a refresh token is present.
    public var customMirror: Mirror {
        Mirror(self, children: ["accessToken": "<redacted>", "hasRefreshToken": refreshToken != nil], displayStyle: .struct)
    }
}

extension SigningMiddleware: CustomReflectable {
    /// Everything but the secret.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "secret": "<redacted>", "algorithm": "\(algorithm)", "output": "\(output)",
                "timestampParameter": timestampParameter as Any, "nonceParameter": nonceParameter as Any,
            ], displayStyle: .struct)
    }
}
