import Curlew
import Foundation
import FuzzSupport
@testable import Curlew
@testable import CurlewCore
@testable import CurlewTesting

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
        // Bytes, not Characters (`hasPrefix`/`hasSuffix`): a combining mark after a dot, or a
        // prepended concatenation mark (U+0604) before one, joins the dot to its neighbour.
        let bytes = Array(file.utf8)
        fuzzCheck(bytes.first != UInt8(ascii: ".") && file != "..", "dot name \(file.debugDescription)")
        fuzzCheck(!file.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character in \(file.debugDescription)")
        fuzzCheck(bytes.reversed().starts(with: ".json".utf8.reversed()) && !bytes.reversed().starts(with: ".meta.json".utf8.reversed()),
            "not a body file: \(file.debugDescription)")
        let meta = FixtureName.metadataFile(forBody: file)
        fuzzCheck(Array(meta.utf8) == bytes.dropLast(5) + Array(".meta.json".utf8), "metadata file \(meta.debugDescription) for \(file.debugDescription)")
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
