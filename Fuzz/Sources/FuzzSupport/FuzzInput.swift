import CFuzzDriver
import Foundation

/// Splits a fuzzer's input into parts: the bytes are cut at each `0x00`, so one input can carry a
/// key path and a body, or a name and a scenario, and the fuzzer learns the separator quickly.
public struct FuzzInput {
    /// The parts, in order (at least one, possibly empty).
    public let parts: [Data]

    /// Reads libFuzzer's buffer.
    public init(_ start: UnsafeRawPointer?, _ count: Int) {
        let bytes = start.map { Data(bytes: $0, count: count) } ?? Data()
        parts = bytes.split(separator: 0, omittingEmptySubsequences: false).map { Data($0) }
    }

    /// Part `index` as bytes, empty when absent.
    public func data(_ index: Int) -> Data { index < parts.count ? parts[index] : Data() }

    /// Part `index` as text (invalid UTF-8 repaired, as a header or file read would be).
    public func text(_ index: Int) -> String { String(decoding: data(index), as: UTF8.self) }

    /// The whole input as text.
    public static func text(_ start: UnsafeRawPointer?, _ count: Int) -> String {
        guard let start else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: start, count: count), as: UTF8.self)
    }
}

/// Stops the run with a message libFuzzer records as a crash: a property that must hold for every
/// input did not.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() {
        fatalError("fuzz property violated: \(message())")
    }
}

/// Hands the process to libFuzzer with `callback` as the target (every flag and corpus directory
/// on the command line is libFuzzer's).
public func runFuzzer(_ callback: @convention(c) (UnsafeRawPointer?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
}
