#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Entry point: parse options, run every client at every concurrency level, print the report.
/// `CurlewBenchmark transfer …` runs the transfer benchmark instead (see ``TransferBenchmark``),
/// `CurlewBenchmark storage …` the cache storage benchmark (see ``StorageBenchmark``).
if let command = CommandLine.arguments.dropFirst().first, command == "transfer" || command == "storage" {
    do {
        let arguments = Array(CommandLine.arguments.dropFirst(2))
        if command == "transfer" {
            try await TransferBenchmark.run(arguments: arguments)
        } else {
            try await StorageBenchmark.run(arguments: arguments)
        }
        exit(0)
    } catch {
        Console.error("error: \(error)")
        exit(1)
    }
}

let options: BenchmarkOptions
do {
    options = try BenchmarkOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    if let message = error.message { Console.error("error: \(message)") }
    Console.error(BenchmarkOptions.usage)
    exit(error.message == nil ? 0 : 64)
}

do {
    let runner = Runner(options: options, status: try NginxStatus(url: options.statusURL))
    var results: [RunResult] = []
    for round in 1...options.rounds {
        for concurrency in options.concurrencyLevels {
            for client in options.clients {
                Console.error("round \(round)/\(options.rounds): \(client.displayName), c=\(concurrency): \(options.warmup) warm-up + \(options.requests) requests")
                results.append(try await runner.run(client, concurrency: concurrency))
            }
        }
    }
    let rows = RowSummary.summarize(results)
    let roundsNote = options.rounds == 1 ? "" : "; median of \(options.rounds) rounds"
    let enginesNote = options.engines.map { "; Curlew engines: \($0)" } ?? "; Curlew engines: default"
    print("## Results (\(options.requests) requests per row, \(options.warmup) warm-up requests\(roundsNote)\(enginesNote))")
    print("")
    print(Report.table(rows))
    print("")
    let ratios = Report.ratios(rows, levels: options.concurrencyLevels)
    if !ratios.isEmpty {
        print("## Curlew (Data) relative to the others")
        print("")
        print(ratios)
    }
    let derived: [(String, ClientKind)] = [
        ("Queue overhead", .curlewQueue), ("APIMiddleware cost", .curlewMiddleware),
        ("Memory cache hit", .curlewCacheMemory), ("Disk cache hit", .curlewCacheDisk), ("304 revalidation", .curlewRevalidate),
    ]
    for (title, variant) in derived {
        let table = Report.overhead(rows, of: variant, over: .curlewData, levels: options.concurrencyLevels)
        guard !table.isEmpty else { continue }
        print("## \(title): \(variant.displayName) − Curlew (Data)")
        print("")
        print(table)
        print("")
    }
    let failures = rows.reduce(0) { $0 + $1.failures }
    exit(failures == 0 ? 0 : 1)
} catch {
    Console.error("error: \(error)")
    exit(1)
}
