package import CCurlShim

/// Reads what libcurl measured for a transfer (`curl_easy_getinfo`).
package struct CurlTransferInfo {
    package let handle: UnsafeMutableRawPointer

    /// A duration option (`*_TIME_T`, microseconds).
    package func duration(_ info: CURLINFO) -> Duration {
        .microseconds(offset(info))
    }

    /// A `long` option.
    package func long(_ info: CURLINFO) -> Int {
        var value = 0
        _ = curlew_easy_getinfo_long(handle, info, &value)
        return value
    }

    /// A `curl_off_t` option.
    package func offset(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, info, &value)
        return Int64(value)
    }

    /// A string option, `nil` when empty.
    package func string(_ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>? = nil
        _ = curlew_easy_getinfo_string(handle, info, &value)
        guard let value, value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// libcurl's timings and counters for the transfer.
    package func metrics() -> TransferMetrics {
        TransferMetrics(
            nameLookup: duration(CURLINFO_NAMELOOKUP_TIME_T),
            connect: duration(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: duration(CURLINFO_APPCONNECT_TIME_T),
            firstByte: duration(CURLINFO_STARTTRANSFER_TIME_T),
            total: duration(CURLINFO_TOTAL_TIME_T),
            bytesSent: Int64(long(CURLINFO_REQUEST_SIZE)) + offset(CURLINFO_SIZE_UPLOAD_T),
            bytesReceived: Int64(long(CURLINFO_HEADER_SIZE)) + offset(CURLINFO_SIZE_DOWNLOAD_T),
            reusedConnection: long(CURLINFO_NUM_CONNECTS) == 0,
            httpVersion: Self.versionName(long(CURLINFO_HTTP_VERSION)),
            redirectCount: long(CURLINFO_REDIRECT_COUNT),
            pretransfer: duration(CURLINFO_PRETRANSFER_TIME_T),
            remoteAddress: string(CURLINFO_PRIMARY_IP),
            remotePort: long(CURLINFO_PRIMARY_PORT))
    }

    /// `CURLINFO_HTTP_VERSION` as ``TransferMetrics/httpVersion`` spells it.
    package static func versionName(_ version: Int) -> String {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: "1.1"
        }
    }
}
