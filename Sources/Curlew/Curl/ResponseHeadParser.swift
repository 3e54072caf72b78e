internal import HTTPTypes

/// Turns libcurl's header lines into `HTTPFields`, keeping only the last response's headers
/// (each status line — a redirect, a `100 Continue` — starts over).
struct ResponseHeadParser {
    private(set) var fields = HTTPFields()
    /// Header bytes seen so far, across all responses (activity for idle detection).
    private(set) var bytesSeen = 0

    mutating func consume(line bytes: UnsafeRawBufferPointer) {
        bytesSeen += bytes.count
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") {
            end -= 1
        }
        guard end > 0 else { return }
        let line = UnsafeRawBufferPointer(rebasing: bytes[0..<end])
        if line.starts(with: "HTTP/".utf8) {
            fields = HTTPFields()
            return
        }
        // Obsolete line folding (a line starting with whitespace) is not valid in responses we accept.
        guard line[0] != UInt8(ascii: " "), line[0] != UInt8(ascii: "\t"),
            let colon = line.firstIndex(of: UInt8(ascii: ":"))
        else { return }
        guard let name = HTTPField.Name(String(decoding: line[0..<colon], as: UTF8.self)) else { return }
        var valueStart = colon + 1
        while valueStart < line.count, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") {
            valueStart += 1
        }
        fields.append(HTTPField(name: name, value: line[valueStart..<line.count]))
    }
}
