package import CCurlShim
package import Foundation

/// Sets easy-handle options and turns a refusal into a ``CurlewError`` naming the option.
package struct CurlOptionSetter {
    package let handle: UnsafeMutableRawPointer
    /// The request the options are for; its summary is made only for an error.
    package let prepared: PreparedRequest

    package init(handle: UnsafeMutableRawPointer, request: PreparedRequest) {
        self.handle = handle
        self.prepared = request
    }

    /// The request as errors show it.
    package var request: RequestSummary { prepared.summary }

    package func set(_ option: CURLoption, _ value: Int) throws(CurlewError) {
        try check(curlew_easy_setopt_long(handle, option, value), option)
    }

    package func set(_ option: CURLoption, offset value: curl_off_t) throws(CurlewError) {
        try check(curlew_easy_setopt_off_t(handle, option, value), option)
    }

    /// A string option; `nil` restores libcurl's default.
    package func set(_ option: CURLoption, _ value: String?) throws(CurlewError) {
        try check(curlew_easy_setopt_string(handle, option, value), option)
    }

    package func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlewError) {
        try check(curlew_easy_setopt_pointer(handle, option, value), option)
    }

    package func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws(CurlewError) {
        try check(curlew_easy_setopt_slist(handle, option, value), option)
    }

    /// A `struct curl_blob` option; libcurl copies the bytes (`CURL_BLOB_COPY`).
    package func set(_ option: CURLoption, blob bytes: Data) throws(CurlewError) {
        let code = bytes.withUnsafeBytes { raw -> CURLcode in
            var blob = curl_blob(data: UnsafeMutableRawPointer(mutating: raw.baseAddress), len: raw.count, flags: UInt32(CURL_BLOB_COPY))
            return withUnsafeMutablePointer(to: &blob) { curlew_easy_setopt_pointer(handle, option, UnsafeMutableRawPointer($0)) }
        }
        try check(code, option)
    }

    /// Turns libcurl's answer to setting `option` into an error.
    package func check(_ code: CURLcode, _ option: CURLoption) throws(CurlewError) {
        guard code == CURLE_OK else {
            throw CurlewError(
                code: code == CURLE_NOT_BUILT_IN || code == CURLE_UNKNOWN_OPTION ? .invalidConnectionSettings : .transportFailure,
                message: "libcurl rejected option \(option.rawValue): \(String(cString: curl_easy_strerror(code)))",
                request: request)
        }
    }
}
