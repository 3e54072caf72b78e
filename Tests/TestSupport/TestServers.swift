import Foundation

/// The real servers the tests talk to (httpbin, nginx, the TLS and HTTP/2 nginx, the proxies),
/// found through their `CURLEW_*` variables.
///
/// `scripts/test.sh` starts them and exports the variables before `swift test`. A plain
/// `swift test` — the Swift habit — finds none, so the first test that asks starts them once
/// for the whole run with `scripts/serve-for-tests.sh` (which installs what they need first) and
/// reads their variables back. That script keeps them until its standard input closes: the pipe's
/// write end stays open in this process, so the servers stop when the test process ends, however
/// it ends. If they cannot be started, the script's output is on standard error and the tests
/// that need them fail with their own "is not set" message: a run without its servers never
/// passes.
package enum TestServers {
    /// The process's environment, with the variables of the servers started for this run added.
    package static var environment: [String: String] { started.environment }

    /// httpbin's base URL (`CURLEW_HTTPBIN_URL`). Throws when it is not set, so a test that
    /// needs httpbin fails, never skips, in a run without it.
    package static func httpbin() throws -> String {
        guard let url = environment["CURLEW_HTTPBIN_URL"] else { throw MissingServer(variable: "CURLEW_HTTPBIN_URL", script: "scripts/httpbin.sh") }
        return url
    }

    /// A server a test needs whose variable is not set.
    package struct MissingServer: Error, CustomStringConvertible {
        let variable: String
        let script: String
        package var description: String { "\(variable) is not set: run scripts/test.sh, which starts it (\(script))" }
    }

    private static let started: (environment: [String: String], process: SpawnedProcess?) = start()

    private static func start() -> (environment: [String: String], process: SpawnedProcess?) {
        var environment = ProcessInfo.processInfo.environment
        guard environment["CURLEW_NGINX_URL"] == nil else { return (environment, nil) }
        // Tests/TestSupport/TestServers.swift → the repository.
        let repository = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var input: [Int32] = [0, 0]
        var output: [Int32] = [0, 0]
        guard pipe(&input) == 0, pipe(&output) == 0 else { return (environment, nil) }
        // No other child inherits them (SpawnedProcess also closes every descriptor above 2).
        for descriptor in input + output { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        let process: SpawnedProcess
        do {
            process = try SpawnedProcess(
                path: "/bin/bash", arguments: [repository.appendingPathComponent("scripts/serve-for-tests.sh").path],
                standardInput: input[0], standardOutput: output[1], mergesStandardError: true)
        } catch {
            FileHandle.standardError.write(Data("TestServers: could not start scripts/serve-for-tests.sh: \(error)\n".utf8))
            return (environment, nil)
        }
        // The child's ends; `input[1]` stays open until this process ends.
        close(input[0])
        close(output[1])
        // Left open too: a server that inherited the pipe as its output never writes into a closed one.
        let reader = FileHandle(fileDescriptor: output[0], closeOnDealloc: false)
        var pending = Data()
        reading: while true {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                if line == "ready" { break reading }
                if line.hasPrefix("CURLEW_"), let equals = line.firstIndex(of: "=") {
                    environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
                } else {
                    FileHandle.standardError.write(Data((line + "\n").utf8))
                }
            }
        }
        return (environment, process)
    }
}
