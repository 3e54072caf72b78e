internal import CCurlShim

/// libcurl's process-wide initialisation, done once before the first handle is created.
package enum CurlGlobal {
    /// `curl_global_init` result; Swift runs a static initializer exactly once, thread-safely.
    package static let initialized: Bool = curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
}
