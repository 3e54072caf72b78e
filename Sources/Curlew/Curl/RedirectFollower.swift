internal import Foundation
internal import HTTPTypes

/// Follows redirects in Swift for requests carrying origin-bound headers, which libcurl would
/// forward to any host: on a change of scheme, host or port it drops `Authorization`, `Cookie`
/// and every ``TransferOptions/originBoundHeaders`` entry.
struct RedirectFollower {
    let limit: Int

    func send(_ request: PreparedRequest, _ execute: (PreparedRequest) async throws -> RawResponse) async throws -> RawResponse {
        var current = request
        var redirects = 0
        while true {
            let response = try await execute(current)
            guard [301, 302, 303, 307, 308].contains(response.status.code), let location = response.headers[.location] else {
                return response
            }
            guard redirects < limit else {
                throw CurlewError(code: .tooManyRedirects, message: "more than \(limit) redirects", request: request.summary)
            }
            redirects += 1
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
            }
            current.setURL(next.absoluteString)
        }
    }

    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
