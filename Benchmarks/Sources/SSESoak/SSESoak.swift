import Curlew
import CurlewOpenAPI
import Foundation
import LoopbackServer
import OpenAPIRuntime
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 26's event-stream soak, measured (not a test): `scripts/sse-soak.sh` runs
///
///     SSESoak serve --port-file FILE [--interval-ms 100]
///     SSESoak run --url http://127.0.0.1:PORT [--streams 200] [--duration 180] [--baseline 30] [--rate 20]
///
/// in two processes. The server (a `LoopbackServer`) sends every open stream an event every
/// `--interval-ms` until `POST /finish`, then an `end` event carrying the count it sent. The client
/// — the generated client of `Benchmarks/openapi-sse/openapi.yaml` on `CurlewTransport` — makes
/// ordinary `getItem` calls at `--rate` per second, one at a time, for `--baseline` seconds with no
/// stream open and then for `--duration` seconds with `--streams` streams open, and reports the
/// calls' latency, every stream's events (each must arrive, in order, and the stream end with the
/// server's count), its own resident memory and CPU time, and the connections at the end. It exits
/// with status 1 when a check fails.
@main
struct SSESoak {
    static func main() async {
        var arguments = Arguments(CommandLine.arguments.dropFirst())
        do {
            switch arguments.command {
            case "serve": try await SoakServer.serve(arguments: &arguments)
            case "run": try await SoakClient.run(arguments: &arguments)
            default:
                FileHandle.standardError.write(Data("usage: SSESoak serve --port-file FILE [--interval-ms N] | run --url URL [--streams N] [--duration S] [--baseline S] [--rate N]\n".utf8))
                exit(2)
            }
        } catch {
            FileHandle.standardError.write(Data("SSESoak: \(error)\n".utf8))
            exit(1)
        }
    }
}

/// `--name value` arguments after a command word.
struct Arguments {
    let command: String
    private var values: [String: String] = [:]

    init(_ words: ArraySlice<String>) {
        command = words.first ?? ""
        var rest = words.dropFirst()
        while let name = rest.popFirst() {
            values[name] = rest.popFirst() ?? ""
        }
    }

    func string(_ name: String) -> String? { values[name] }

    func int(_ name: String, default value: Int) throws -> Int {
        guard let text = values[name] else { return value }
        guard let number = Int(text), number >= 0 else { throw SoakError("\(name) \(text) is not a count") }
        return number
    }
}

struct SoakError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// MARK: - Server

/// The soak's server: `GET /events/{n}`, `GET /items/{id}`, `POST /finish`, `GET /stats`.
enum SoakServer {
    struct State {
        var finishing = false
        /// Events sent, by stream number.
        var sent: [Int: Int] = [:]
        var ended = 0
        var dropped = 0
    }

    static func serve(arguments: inout Arguments) async throws {
        guard let portFile = arguments.string("--port-file") else { throw SoakError("serve needs --port-file") }
        let interval = Duration.milliseconds(try arguments.int("--interval-ms", default: 100))
        let state = SharedState()
        let server = try await LoopbackServer.start { request in
            await handle(request, state: state, interval: interval)
        }
        ServerLink.shared.server.withLock { $0 = server }
        try Data("\(server.port)\n".utf8).write(to: URL(fileURLWithPath: portFile))
        // Runs until the script stops it.
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// The server's state (its lock guards it).
    final class SharedState: Sendable {
        private let state = Mutex(State())
        func withLock<T: Sendable>(_ body: (inout State) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// The server, for `/stats`.
    final class ServerLink: Sendable {
        let server = Mutex<LoopbackServer?>(nil)
        static let shared = ServerLink()
    }

    static func handle(_ request: ServerRequest, state: SharedState, interval: Duration) async -> ServerResponse {
        let parts = request.path.split(separator: "/").map(String.init)
        switch (request.method, parts.first, parts.count) {
        case ("GET", "items", 2):
            guard let id = Int(parts[1]) else { return .text("no such item", status: 404) }
            return .json(#"{"id":\#(id),"name":"item \#(id)"}"#)
        case ("GET", "events", 2):
            guard let stream = Int(parts[1]) else { return .text("no such stream", status: 404) }
            let connection = request.connection
            return .stream(headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]) { writer in
                var sent = 0
                let clock = ContinuousClock()
                var next = clock.now
                do {
                    while true {
                        if state.withLock({ $0.finishing }) {
                            try await writer.write("event: end\ndata: \(sent)\n\n")
                            state.withLock { $0.ended += 1 }
                            return
                        }
                        if connection.isClosed { throw SoakError("closed") }
                        next += interval
                        try await Task.sleep(until: next, clock: clock)
                        sent += 1
                        try await writer.write("id: \(sent)\ndata: {\"stream\":\(stream),\"seq\":\(sent)}\n\n")
                        state.withLock { [sent] in $0.sent[stream] = sent }
                    }
                } catch {
                    state.withLock { $0.dropped += 1 }
                    throw error
                }
            }
        case ("POST", "finish", 1):
            state.withLock { $0.finishing = true }
            return ServerResponse(status: 204)
        case ("GET", "stats", 1):
            let snapshot = state.withLock { $0 }
            let count = (snapshot.sent.keys.max() ?? -1) + 1
            let sent = (0..<count).map { snapshot.sent[$0] ?? 0 }
            let open = ServerLink.shared.server.withLock { $0?.openConnections } ?? -1
            let accepted = ServerLink.shared.server.withLock { $0?.connectionsAccepted } ?? -1
            return .json(
                #"{"sent":[\#(sent.map(String.init).joined(separator: ","))],"ended":\#(snapshot.ended),"dropped":\#(snapshot.dropped),"openConnections":\#(open),"connectionsAccepted":\#(accepted)}"#
            )
        default:
            return .text("not found", status: 404)
        }
    }
}
