import Curlew
import Foundation

/// A HUD accessory for the terminal: on a TTY a spinner-style line with the work's name while it
/// runs; otherwise one plain line per batch or chain when it stops (single requests stay quiet so
/// the tour reads well in logs).
struct TerminalHUD: Accessory {
    let isTerminal = isatty(STDOUT_FILENO) != 0

    func willStart(_ activity: Activity) {
        guard isTerminal else { return }
        print("\r   ⠿ \(activity.name)…", terminator: "")
        fflush(nil)
    }

    func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration) {
        if isTerminal {
            print("\r\u{1B}[K", terminator: "")
            fflush(nil)
        }
        guard activity.kind != .request else { return }
        let milliseconds = Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000
        let ended = if case .success = outcome { "done" } else { "finished with failures" }
        say("[hud] \(activity.name): \(ended) in \(String(format: "%.1f", milliseconds)) ms")
    }
}
