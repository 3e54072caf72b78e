internal import Foundation

/// HTTP dates for the cache's freshness arithmetic, read without splitting strings: a hit reads
/// `Date` (and maybe `Expires`, `Last-Modified`) of every stored answer, and the general parser
/// (``ServerClock/parseHTTPDate(_:)``) costs more than the rest of a memory hit. Written, too,
/// for a `304` that arrived without a `Date`.
enum CacheDateParser {
    /// The date in `text`: the 29-byte IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) directly,
    /// anything else through ``ServerClock/parseHTTPDate(_:)``, so both accept the same dates.
    static func parse(_ text: String) -> Date? {
        if let fast = text.utf8.withContiguousStorageIfAvailable({ imfFixdate($0) }), let date = fast { return date }
        return ServerClock.parseHTTPDate(text)
    }

    /// The IMF-fixdate of `date` (`Sun, 06 Nov 1994 08:49:37 GMT`), whole seconds: what
    /// ``parse(_:)`` reads back.
    static func format(_ date: Date) -> String {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // The civil date of a day count from 1970-01-01 (Howard Hinnant's algorithm).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 2 : shiftedMonth - 10
        let year = yearOfEra + era * 400 + (month < 2 ? 1 : 0)
        // 1970-01-01 was a Thursday.
        let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let monthName = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][month]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let clock = "\(two(secondOfDay / 3_600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60))"
        return "\(weekday), \(two(day)) \(monthName) \(year) \(clock) GMT"
    }

    private static let months: [(UInt8, UInt8, UInt8)] = [
        (74, 97, 110), (70, 101, 98), (77, 97, 114), (65, 112, 114), (77, 97, 121), (74, 117, 110),
        (74, 117, 108), (65, 117, 103), (83, 101, 112), (79, 99, 116), (78, 111, 118), (68, 101, 99),
    ]

    private static func imfFixdate(_ bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == UInt8(ascii: " "), bytes[7] == UInt8(ascii: " "),
            bytes[11] == UInt8(ascii: " "), bytes[16] == UInt8(ascii: " "), bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
            bytes[25] == UInt8(ascii: " "), bytes[26] == UInt8(ascii: "G"), bytes[27] == UInt8(ascii: "M"), bytes[28] == UInt8(ascii: "T"),
            let day = number(bytes, 5, 2), let year = number(bytes, 12, 4), let hour = number(bytes, 17, 2),
            let minute = number(bytes, 20, 2), let second = number(bytes, 23, 2),
            let month = months.firstIndex(where: { $0 == (bytes[8], bytes[9], bytes[10]) }),
            (1...31).contains(day), (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second)
        else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm), as ServerClock.
        let y = month < 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 10) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static func number(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ length: Int) -> Int? {
        var value = 0
        for index in start..<(start + length) {
            let digit = Int(bytes[index]) - 48
            guard (0...9).contains(digit) else { return nil }
            value = value * 10 + digit
        }
        return value
    }
}
