// A small stand-in for `CurlewBenchmark` when only the cache rows are wanted: one client, one
// mode (network, memory, disk, revalidate), `--requests N` sequential requests after
// `--warmup`, the same endpoint and policies as CacheClients.swift. It depends on Curlew alone
// (no AsyncHTTPClient, SwiftNIO or NIOSSL), so a release build takes minutes, not an hour, on a
// busy machine. Prints CPU (user + system) and wall µs per request; run it under
// ../shared/tools/instructions-per-request for instruction counts (see BENCHMARKS.md).
import Curlew
import Foundation

/// `GET <url>` returning the body bytes, with a fixed cache policy (as Benchmarks/CacheClients.swift).
struct CachedDataRequest: Endpoint {
    typealias Response = Data
    let path: String
    let options: RequestOptions

    init(path: String, policy: CachePolicy) {
        self.path = path
        var options = RequestOptions()
        options.cache = policy
        self.options = options
    }
}

func argument(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let index = args.firstIndex(of: name), index + 1 < args.count else { return nil }
    return args[index + 1]
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

let mode = argument("--mode") ?? "memory"
let url = argument("--url") ?? "http://127.0.0.1:18090/small.json"
let requests = Int(argument("--requests") ?? "1000") ?? 1000
let warmup = Int(argument("--warmup") ?? "200") ?? 200

let transport = CurlTransport()
var directory: String?
let client: APIClient
let cache: ResponseCache?
let request: CachedDataRequest
switch mode {
case "network":
    cache = nil
    client = APIClient(configuration: ClientConfiguration(), transport: transport)
    request = CachedDataRequest(path: url, policy: .networkOnly)
default:
    let storage: any CacheStorage
    if mode == "disk" {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-hitbench-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        directory = path
        storage = DiskCacheStorage(directory: path)
    } else {
        storage = MemoryCacheStorage()
    }
    let responseCache = ResponseCache(storage: storage, credentials: .anonymous)
    cache = responseCache
    client = APIClient(configuration: ClientConfiguration(middleware: [responseCache]), transport: transport)
    request = CachedDataRequest(path: url, policy: mode == "revalidate" ? .alwaysRevalidate : .maxAge(.hours(1)))
}
let expected: ResponseSource = mode == "network" ? .network : mode == "revalidate" ? .revalidated : .cache
for index in 0..<warmup {
    let response = try await client.response(for: request)
    if index == 0 { await cache?.waitForPendingWrites() }  // the first answer is on disk before the hits
    guard response.value.count == 225 else { fatalError("unexpected body of \(response.value.count) bytes") }
}
let start = cpuSeconds()
let wall = ContinuousClock.now
for _ in 0..<requests {
    let response = try await client.response(for: request)
    guard response.source == expected, response.value.count == 225 else { fatalError("unexpected answer from \(response.source)") }
}
let cpu = cpuSeconds() - start
let elapsed = ContinuousClock.now - wall
await cache?.waitForPendingWrites()
if let cache {
    let s = await cache.statistics
    FileHandle.standardError.write(Data("\(mode): \(s.hits) hits, \(s.misses) misses, \(s.revalidations) revalidations, \(s.stores) stores, \(s.writeFailures) write failures\n".utf8))
}
print(String(format: "%@: %d requests, CPU %.2f µs/request, wall %.2f µs/request", mode, requests, cpu / Double(requests) * 1e6,
             Double(elapsed.components.attoseconds) / 1e12 / Double(requests) + Double(elapsed.components.seconds) * 1e6 / Double(requests)))
await transport.shutdown()
if let directory { try? FileManager.default.removeItem(atPath: directory) }
