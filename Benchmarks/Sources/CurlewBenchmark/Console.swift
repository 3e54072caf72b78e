import Foundation

/// Progress and diagnostics go to standard error so standard output holds only the report.
enum Console {
    static func error(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}
