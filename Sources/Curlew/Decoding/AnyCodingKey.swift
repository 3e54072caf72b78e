/// A coding key made from any string or index (`package`: the decoding wrappers of CurlewDecoding
/// and the mock generator of CurlewTesting use it).
package struct AnyCodingKey: CodingKey {
    package var stringValue: String
    package var intValue: Int?

    package init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }

    package init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}
