internal import Foundation
internal import HTTPTypes
#if canImport(Glibc)
internal import Glibc
#endif

/// Follows redirects in Swift for requests carrying origin-bound headers, which libcurl would
/// forward to any host: on a change of scheme, host or port it drops `Authorization`, `Cookie`
/// and every ``TransferOptions/originBoundHeaders`` entry.
///
/// Each hop is reported as a `redirected` event; the final response's metrics count the hops
/// followed here plus any libcurl followed. The body of a hop is discarded: a stream is dropped
/// (which cancels its transfer), a file is removed so the next hop can create it again.
struct RedirectFollower {
    /// The statuses that are followed when they carry a `Location`.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Most hops followed.
    let limit: Int

    /// Sends `request` through `execute`, following redirects up to ``limit``.
    func send(
        _ request: PreparedRequest, context: TransportContext,
        _ execute: (PreparedRequest) async throws -> RawResponse
    ) async throws -> RawResponse {
        var current = request
        var redirects = 0
        while true {
            var response = try await execute(current)
            guard Self.redirectStatuses.contains(response.status.code), let location = response.headers[.location] else {
                if var metrics = response.metrics {
                    metrics.redirectCount += redirects
                    response.metrics = metrics
                }
                return response
            }
            Self.discardBody(of: response)
            guard redirects < limit else {
                throw CurlewError(code: .tooManyRedirects, message: "more than \(limit) redirects", request: request.summary)
            }
            redirects += 1 + (response.metrics?.redirectCount ?? 0)
            guard let next = URL(string: location, relativeTo: URL(string: current.url))?.absoluteURL,
                let scheme = next.scheme?.lowercased()
            else {
                throw CurlewError(code: .redirectRefused, message: "the redirect location is not a URL", request: current.summary)
            }
            guard scheme == "http" || scheme == "https" else {
                throw CurlewError(code: .redirectRefused, message: "a redirect to scheme \"\(scheme)\" was refused", request: current.summary)
            }
            if Self.origin(of: next) != URL(string: current.url).map(Self.origin) {
                current.headers[.authorization] = nil
                current.headers[.cookie] = nil
                for name in current.options.originBoundHeaders { current.headers[name] = nil }
            }
            let status = response.status.code
            if status == 303 || ((status == 301 || status == 302) && current.method == .post) {
                current.method = .get
                current.body = nil
                current.headers[.contentType] = nil
            } else if let content = current.content, !content.isReplayable {
                throw CurlewError(
                    code: .redirectRefused, message: "a one-shot body stream cannot be sent again to the redirect target",
                    request: current.summary)
            }
            current.setURL(next.absoluteString)
            context.events.report(.redirected) { $0.location = current.summary.redactedURL }
        }
    }

    /// Frees what a hop's response holds: its stream is cancelled, its file removed.
    private static func discardBody(of response: RawResponse) {
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
