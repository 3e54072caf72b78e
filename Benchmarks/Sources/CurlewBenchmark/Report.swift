/// Formats rows as Markdown: one table, then Curlew (Data) against each other client per
/// concurrency level.
enum Report {
    static func table(_ results: [RowSummary]) -> String {
        var lines = [
            "| client | c | requests/s | p50 ms | p99 ms | CPU µs/req | context switches/req | connections | failures |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for result in results {
            let cells = [
                result.client.displayName,
                "\(result.concurrency)",
                format(result.requestsPerSecond, decimals: 0),
                format(result.p50Milliseconds, decimals: 3),
                format(result.p99Milliseconds, decimals: 3),
                format(result.cpuMicrosecondsPerRequest, decimals: 1),
                format(result.contextSwitchesPerRequest, decimals: 2),
                result.connections.count == 1 ? "\(result.connections.lowerBound)" : "\(result.connections.lowerBound)–\(result.connections.upperBound)",
                "\(result.failures)",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// Ratios of Curlew (Data) to each other client; below 1× CPU and above 1× req/s favour Curlew.
    static func ratios(_ results: [RowSummary], levels: [Int]) -> String {
        var lines: [String] = []
        for level in levels {
            let atLevel = results.filter { $0.concurrency == level }
            guard let curlew = atLevel.first(where: { $0.client == .curlewData }) else { continue }
            let others = atLevel.filter { $0.client != .curlewData }
            guard !others.isEmpty else { continue }
            lines.append("### c = \(level)")
            lines.append("")
            for other in others {
                let throughput = curlew.requestsPerSecond / other.requestsPerSecond
                let cpu = curlew.cpuMicrosecondsPerRequest / other.cpuMicrosecondsPerRequest
                lines.append("- vs \(other.client.displayName): req/s: Curlew \(format(throughput, decimals: 2))× \(other.client.displayName); CPU/req: Curlew \(format(cpu, decimals: 2))× \(other.client.displayName)")
            }
            lines.append("")
        }
        return lines.joined(separator: "\n")
    }

    /// What `variant` costs over `baseline` per request at each level: the CPU µs/request
    /// difference and ratio, and the req/s ratio. Empty when either row is missing.
    static func overhead(_ results: [RowSummary], of variant: ClientKind, over baseline: ClientKind, levels: [Int]) -> String {
        var lines = [
            "| c | \(baseline.displayName) CPU µs/req | \(variant.displayName) CPU µs/req | difference µs/req | CPU ratio | req/s ratio |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for level in levels {
            let atLevel = results.filter { $0.concurrency == level }
            guard let base = atLevel.first(where: { $0.client == baseline }),
                  let other = atLevel.first(where: { $0.client == variant }) else { continue }
            let cells = [
                "\(level)",
                format(base.cpuMicrosecondsPerRequest, decimals: 1),
                format(other.cpuMicrosecondsPerRequest, decimals: 1),
                (other.cpuMicrosecondsPerRequest >= base.cpuMicrosecondsPerRequest ? "+" : "")
                    + format(other.cpuMicrosecondsPerRequest - base.cpuMicrosecondsPerRequest, decimals: 1),
                format(other.cpuMicrosecondsPerRequest / base.cpuMicrosecondsPerRequest, decimals: 2) + "×",
                format(other.requestsPerSecond / base.requestsPerSecond, decimals: 2) + "×",
            ]
            lines.append("| " + cells.joined(separator: " | ") + " |")
        }
        return lines.count > 2 ? lines.joined(separator: "\n") : ""
    }

    /// Fixed-point formatting without Foundation's locale-dependent `String(format:)`.
    static func format(_ value: Double, decimals: Int) -> String {
        guard value.isFinite else { return "n/a" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (value * scale).rounded()
        guard decimals > 0 else { return String(Int(scaled)) }
        let negative = scaled < 0
        let magnitude = Int(abs(scaled))
        let whole = magnitude / Int(scale)
        var fraction = String(magnitude % Int(scale))
        while fraction.count < decimals { fraction = "0" + fraction }
        return (negative ? "-" : "") + "\(whole).\(fraction)"
    }
}
