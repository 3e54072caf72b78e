import Foundation
import FuzzSupport
@testable import Curlew

/// Input: `name` NUL `scenario` NUL `metadata JSON`. A fixture file name that passes the check
/// must be one component that cannot leave the fixture directory; the sidecar metadata parser
/// must accept or reject with `.fixtureInvalid`, never crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFixtureName(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let name = input.text(0)
    let scenario: String? = input.parts.count > 1 ? input.text(1) : nil
    _ = FixtureName.printable(name)
    if let file = try? FixtureName.file(for: name, scenario: scenario) {
        fuzzCheck(!file.contains("/") && !file.contains("\\") && !file.contains("%"), "separator in \(file.debugDescription)")
        fuzzCheck(!file.hasPrefix(".") && file != "..", "dot name \(file.debugDescription)")
        fuzzCheck(!file.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in \(file.debugDescription)")
        fuzzCheck(file.hasSuffix(".json") && !file.hasSuffix(".meta.json"), "not a body file: \(file.debugDescription)")
    }
    let metadata = input.parts.count > 2 ? input.data(2) : input.data(0)
    do {
        let parsed = try FixtureMetadata(metadata, file: "Fuzz.meta.json")
        if let status = parsed.status { fuzzCheck((100...599).contains(status.code), "status \(status.code)") }
    } catch {
        fuzzCheck(error.code == .fixtureInvalid, "metadata failed with \(error.code)")
    }
    return 0
}

runFuzzer(fuzzFixtureName)
