package import CCurlShim

/// What an easy handle points at for one exchange and libcurl does not copy: the cookie jar's
/// share handle (kept alive by holding the jar) and the `CURLOPT_CONNECT_TO` list.
///
/// Owned by one transfer; ``detach(from:)`` runs before its handle goes back to the pool, since
/// `curl_easy_reset` leaves `CURLOPT_SHARE` in place and a pooled handle must not keep a jar
/// alive or point at a freed list. Used by the thread that owns the transfer only.
package final class CurlConnectionAttachment {
    private let jar: CookieJar?
    package var sharesCookies = false
    /// Whether `CURLOPT_COOKIE` carries the request's own cookies.
    package var setsCookie = false
    package private(set) var connectTo: UnsafeMutablePointer<curl_slist>?

    package init(jar: CookieJar?) {
        self.jar = jar
    }

    deinit {
        if let connectTo { curl_slist_free_all(connectTo) }
    }

    package func appendConnectTo(_ line: String) {
        if let next = curl_slist_append(connectTo, line) { connectTo = next }
    }

    /// Clears the options that point here; then the handle may be reused or freed.
    package func detach(from handle: UnsafeMutableRawPointer) {
        if sharesCookies {
            // `CURLOPT_COOKIEFILE ""` queued a file name that libcurl frees only when a transfer
            // starts; `curl_easy_reset` (7.88) drops it unfreed, so a transfer that never started
            // leaked it (LeakSanitizer). Clearing the queue frees it; the shared cookies stay.
            _ = curlew_easy_setopt_string(handle, CURLOPT_COOKIEFILE, nil)
            _ = curlew_easy_setopt_pointer(handle, CURLOPT_SHARE, nil)
        }
        if setsCookie { _ = curlew_easy_setopt_string(handle, CURLOPT_COOKIE, nil) }
        if connectTo != nil { _ = curlew_easy_setopt_slist(handle, CURLOPT_CONNECT_TO, nil) }
    }
}
