internal import Foundation
internal import HTTPTypes
#if canImport(Glibc)
    internal import Glibc
#endif

/// The one redirect policy: which responses are redirects and what the next hop's request is.
/// ``RedirectStep`` applies it for every client call; libcurl never follows (its rules differ —
/// 7.88 turns a `PUT` answered `301` into a bodiless `PUT`, keeps `Content-Type` on a `303`).
///
/// - Methods (RFC 9110 §15.4): `307`/`308` keep the method and body; `303` becomes `GET`
///   (`HEAD` stays `HEAD`) without body or content headers; `301`/`302` turn only `POST` into
///   `GET`, every other method keeps its body. A body that must be sent again but cannot be
///   replayed (a one-shot stream) fails with `.redirectRefused`.
/// - Origins: on a change of scheme, host or port, `Authorization`, `Proxy-Authorization`,
///   `Cookie`, a caller's `Host` and every ``/CurlewCore/TransferOptions/originBoundHeaders`` entry are dropped.
/// - Downgrades: `https` → `http` fails with `.insecureRedirect` unless
///   ``/CurlewCore/TransferOptions/allowsInsecureRedirects``; when allowed, the hop also loses every
///   credential (the headers above and any user-info in the new URL).
enum RedirectPolicy {
    /// Whether `status` is followed when it carries a `Location`: 301, 302, 303, 307, 308.
    static func isRedirect(_ status: Int) -> Bool { RedirectStatus.contains(status) }

    /// The `Location` a response asks to follow: a redirect status with a non-empty `Location`.
    /// A 3xx without one (or with an empty one) is an answer, returned as it is. The headers are
    /// looked at only for a redirect status, and without parsing the transport's raw header block.
    static func location(toFollow response: RawResponse) -> String? {
        guard isRedirect(response.status.code),
            let location = response.headerFields[.location]?.trimmingCharacters(in: .whitespaces), !location.isEmpty
        else { return nil }
        return location
    }

    /// The request for the next hop, by the policy above.
    static func nextRequest(after current: PreparedRequest, status: Int, location: String) throws(CurlewError) -> PreparedRequest {
        guard let next = URL(string: location, relativeTo: URL(string: current.url))?.absoluteURL,
            let scheme = next.scheme?.lowercased(), next.host?.isEmpty == false
        else {
            throw CurlewError(code: .redirectRefused, message: "the redirect location is not a URL", request: current.summary)
        }
        guard scheme == "http" || scheme == "https" else {
            throw CurlewError(code: .redirectRefused, message: "a redirect to scheme \"\(scheme)\" was refused", request: current.summary)
        }
        var request = current
        var nextURL = next.absoluteString
        let currentURL = URL(string: current.url)
        let downgrade = currentURL?.scheme?.lowercased() == "https" && scheme == "http"
        if downgrade {
            guard current.options.allowsInsecureRedirects else {
                throw CurlewError(
                    code: .insecureRedirect, message: "a redirect from https to http was refused (allowsInsecureRedirects is off)",
                    request: current.summary)
            }
            if next.user != nil || next.password != nil {
                var components = URLComponents(url: next, resolvingAgainstBaseURL: false)
                components?.user = nil
                components?.password = nil
                nextURL = components?.string ?? nextURL
            }
        }
        if downgrade || Self.origin(of: next) != currentURL.map(Self.origin) {
            request.headers[.authorization] = nil
            request.headers[.proxyAuthorization] = nil
            request.headers[.cookie] = nil
            // A `Host` the caller set names the first origin; the next one gets its own.
            request.headers[HTTPField.Name("Host")!] = nil
            for name in current.options.originBoundHeaders { request.headers[name] = nil }
        }
        let becomesGet = status == 303 || ((status == 301 || status == 302) && current.method == .post)
        if becomesGet {
            if request.method != .head { request.method = .get }
            request.content = nil
            for name in Self.contentHeaders { request.headers[name] = nil }
        } else if let content = request.content, !content.isReplayable {
            throw CurlewError(
                code: .redirectRefused,
                message: "a one-shot body stream cannot be sent again to the redirect target (HTTP \(status))",
                request: current.summary)
        }
        request.replaceURL(nextURL)
        return request
    }

    /// The headers that describe a body, dropped with it (RFC 9110 §15.4.4).
    static let contentHeaders: [HTTPField.Name] = [
        .contentType, .contentLength, .contentEncoding, .contentLanguage, .contentLocation, .transferEncoding,
    ]

    /// Frees what a hop's response holds: its stream is cancelled, its file removed (the
    /// transport already dropped the body unread).
    static func discardBody(of response: RawResponse) {
        switch response.content {
        case .data: break
        case .stream(let stream): stream.cancel()
        case .file(let path, _): unlink(path)
        }
    }

    /// `scheme://host:port`, lower-cased, with the scheme's default port filled in.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
