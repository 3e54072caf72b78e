import Curlew
import Foundation

/// Runs `body` with a new `CurlTransport` and shuts it down afterwards, also when `body` throws.
func withTransport<T>(configuration: CurlTransport.Configuration = .init(), _ body: (CurlTransport) async throws -> T) async throws -> T {
    let transport = CurlTransport(configuration: configuration)
    do {
        let result = try await body(transport)
        await transport.shutdown()
        return result
    } catch {
        await transport.shutdown()
        throw error
    }
}

/// HTTP/1.1-only transfer options (the scripted server speaks nothing else).
func http1Options(_ adjust: (inout TransferOptions) -> Void = { _ in }) -> TransferOptions {
    var options = TransferOptions()
    options.httpVersion = .http1Only
    adjust(&options)
    return options
}
