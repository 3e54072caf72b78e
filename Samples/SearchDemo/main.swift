import Curlew
import Foundation
import LoopbackServer

// SearchDemo: a short tour of Curlew against an embedded picture-gallery API on 127.0.0.1.
// `swift run SearchDemo --base-url http://host:port/api` points the tour at another server.

let arguments = CommandLine.arguments.dropFirst()
var baseURL: String?
if let flag = arguments.firstIndex(of: "--base-url") {
    guard arguments.index(after: flag) < arguments.endIndex else {
        print("usage: SearchDemo [--base-url URL]")
        exit(2)
    }
    baseURL = arguments[arguments.index(after: flag)]
}

var server: LoopbackServer?
if baseURL == nil {
    let started = try await DemoAPI.start()
    server = started
    baseURL = started.baseURL + "/api"
    print("Embedded gallery API listening on \(started.baseURL)")
}

let transport = CurlTransport()
let client = APIClient(
    configuration: ClientConfiguration(baseURL: baseURL ?? "", accessories: [TerminalHUD()]),
    transport: transport)
print("Curlew tour against \(baseURL ?? "")")
let failures = await Tour(client: client).run()
await transport.shutdown()
await server?.shutdown()
print(failures == 0 ? "\nTour complete." : "\nTour finished with \(failures) failed step(s).")
exit(failures == 0 ? 0 : 1)
