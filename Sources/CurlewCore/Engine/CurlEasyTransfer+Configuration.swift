internal import CCurlShim
internal import Foundation
internal import HTTPTypes

/// Configuring the handle for one transfer, on the caller's thread before submission: the
/// transfer's ``EasyHandleSettings`` applied as a difference from what the pooled handle carries,
/// then what is this transfer's own (URL, header list, pointers to the transfer).
extension CurlEasyTransfer {
    /// `source` is the request-body source the machine holds (passed in: reading it back from the
    /// machine's state would copy the state).
    package func configure(limitsBody: Bool, lowSpeed: EasyHandleSettings.LowSpeedLimit?, source: RequestBodySource?) throws(CurlewError) {
        try EasyHandleOptions.checkRanges(request.options, request: request.summary)
        let setter = CurlOptionSetter(handle: handle, request: request)
        let this = Unmanaged.passUnretained(self).toOpaque()
        let options = EasyHandleOptions(request, limitsBody: limitsBody)
        let guardsReplay = ReplayGuard.isNeeded(method: request.method, content: request.content)
        // libcurl never reads an empty body: an empty file is checked right before it is sent.
        let checksEmptyFile = if case .file(let file)? = source { file.size == 0 } else { false }
        // The URL is split once, here; configuring it below writes the two parts.
        let target = request.options.connection.proxy.sendsOriginForm(https: options.isHTTPS) ? RequestTarget.ranges(of: request.url) : nil
        let settings = EasyHandleSettings(
            options: options,
            method: Self.method(of: request, source: source),
            sendsRequestTarget: target != nil,
            lowSpeed: lowSpeed,
            reportsProgress: events != nil,
            checksBeforeSending: guardsReplay || checksEmptyFile)
        try pooled.configure(settings, body: EasyHandleBody(bytes: request.body, sourceLength: source?.length), transfer: request.options, setter: setter)
        try configureURL(target: target, setter: setter)
        try configureHeaders(hasBody: request.body != nil || source != nil || request.method == .post)
        if request.options.connection.needsAttachment {
            connection = try CurlConnectionOptions.attach(request.options, setter: setter)
        }
        if guardsReplay { replayGuard = ReplayGuard() }
        if guardsReplay || checksEmptyFile { try setter.set(CURLOPT_PREREQDATA, pointer: this) }
        if let source {
            try setter.set(CURLOPT_READDATA, pointer: this)
            if case .file = source { try setter.set(CURLOPT_SEEKDATA, pointer: this) }
        }
        if events != nil { try setter.set(CURLOPT_XFERINFODATA, pointer: this) }
        try setter.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try setter.set(CURLOPT_PRIVATE, pointer: UnsafeMutableRawPointer(bitPattern: UInt(id)))
        try setter.set(CURLOPT_WRITEDATA, pointer: this)
        try setter.set(CURLOPT_HEADERDATA, pointer: this)
    }

    /// How the request's method and body are set: in-memory bytes are copied to libcurl, files
    /// and streams are read while sending.
    package static func method(of request: PreparedRequest, source: RequestBodySource?) -> EasyHandleMethod {
        let method = request.method
        if let source {
            // libcurl documents two ways to read a body while sending: CURLOPT_POST for POST,
            // CURLOPT_UPLOAD (PUT) otherwise, its method renamed by CURLOPT_CUSTOMREQUEST.
            let seeks = if case .file = source { true } else { false }
            if method == .post { return .readPost(seeks: seeks) }
            return .upload(custom: method == .put ? nil : method.rawValue, seeks: seeks)
        }
        if request.body != nil { return .bytes(custom: method == .post ? nil : method.rawValue) }
        switch method {
        case .get: return .get
        case .head: return .head
        case .post: return .emptyPost
        default: return .bodiless(method.rawValue)
        }
    }

    /// `CURLOPT_URL`, and `CURLOPT_REQUEST_TARGET` for a URL with a query that libcurl sends in
    /// origin form (``RequestTarget``): both written as C strings into one stack buffer (libcurl
    /// copies them).
    private func configureURL(target ranges: RequestTarget.Ranges?, setter: CurlOptionSetter) throws(CurlewError) {
        guard let ranges else {
            try setter.set(CURLOPT_URL, request.url)
            return
        }
        var url = request.url
        let handle = self.handle
        let codes = url.withUTF8 { bytes -> (CURLcode, CURLcode) in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: ranges.cStringLength) { buffer in
                let targetStart = ranges.writeCStrings(of: bytes, into: buffer)
                return buffer.withMemoryRebound(to: CChar.self) { text in
                    guard let base = text.baseAddress else { return (CURLE_OUT_OF_MEMORY, CURLE_OUT_OF_MEMORY) }
                    return (
                        curlew_easy_setopt_string(handle, CURLOPT_URL, base),
                        curlew_easy_setopt_string(handle, CURLOPT_REQUEST_TARGET, base + targetStart)
                    )
                }
            }
        }
        try setter.check(codes.0, CURLOPT_URL)
        try setter.check(codes.1, CURLOPT_REQUEST_TARGET)
    }

    /// The request's headers, without `Expect: 100-continue` and without a content type libcurl
    /// would invent. The list is built only when the pooled handle does not carry one for the
    /// same header set.
    private func configureHeaders(hasBody: Bool) throws(CurlewError) {
        let headers = request.headers
        // libcurl adds `Expect: 100-continue` and a form `Content-Type` only to a POST or an
        // upload; a GET, a HEAD or a bodiless custom method gets neither, and two removal lines
        // more would only lengthen the list libcurl searches for every header it considers.
        var extras: HeaderListExtras = []
        if hasBody { extras.insert(.bodyRemovals) }
        if request.options.acceptsCompressedResponses { extras.insert(.acceptEncoding) }
        if request.options.connection.cookies != nil { extras.insert(.cookiesAside) }
        let code = pooled.ensureHeaders(headers, extras: extras) {
            var lines: [String] = []
            lines.reserveCapacity(headers.count + 3)
            // Empty values as `Name;`, cookie fields joined into one line (``HeaderLines``).
            let hasContentType = HeaderLines.forEach(in: headers, cookies: !extras.contains(.cookiesAside)) { lines.append($0) }
            // The header set is part of what the list is kept for, so its own `Accept-Encoding`
            // is looked for only when a list is built.
            if extras.contains(.acceptEncoding), headers[.acceptEncoding] == nil { lines.append("Accept-Encoding: " + ResponseContentDecoder.acceptEncoding) }
            guard extras.contains(.bodyRemovals) else { return lines }
            // No `Expect: 100-continue` round trip; no form content type libcurl would invent.
            lines.append("Expect:")
            if !hasContentType { lines.append("Content-Type:") }
            return lines
        }
        try CurlOptionSetter(handle: handle, request: request).check(code, CURLOPT_HTTPHEADER)
    }
}
