import Foundation

/// Context switches of this whole process so far: `voluntary_ctxt_switches` plus
/// `nonvoluntary_ctxt_switches` of every thread (`/proc/self/task/*/status`; `/proc/self/status`
/// alone counts only the main thread). Threads that already exited are not counted, which is
/// why it is read around the measured batch, while the client's threads are alive. `0` where
/// there is no procfs.
enum ContextSwitches {
    static func count() -> UInt64 {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
        var total: UInt64 = 0
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") {
                if line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                    total += UInt64(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
                }
            }
        }
        return total
    }
}
