/// Named parameter values in the order they were added; assigning to an existing name replaces
/// its value in place, assigning `nil` removes it.
///
/// ```swift
/// parameters.query["sign"] = .string(signature)
/// ```
package struct ParameterList: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// One named value.
    package struct Entry: Sendable, Hashable {
        /// The wire name.
        package var name: String
        /// The value.
        package var value: ParameterValue

        /// Creates an entry.
        package init(name: String, value: ParameterValue) {
            self.name = name
            self.value = value
        }
    }

    /// The entries in insertion order.
    package private(set) var entries: [Entry] = []

    /// Creates an empty list.
    package init() {}

    /// Creates a list from literal pairs, in order.
    package init(dictionaryLiteral elements: (String, ParameterValue)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// Whether the list has no entries.
    package var isEmpty: Bool { entries.isEmpty }
    /// How many entries the list has.
    package var count: Int { entries.count }

    /// The value for a name; setting `nil` removes the entry.
    package subscript(name: String) -> ParameterValue? {
        get { entries.first { $0.name == name }?.value }
        set {
            let index = entries.firstIndex { $0.name == name }
            switch (index, newValue) {
            case (let index?, let value?): entries[index].value = value
            case (let index?, nil): entries.remove(at: index)
            case (nil, let value?): entries.append(Entry(name: name, value: value))
            case (nil, nil): break
            }
        }
    }

    /// Iterates the entries in insertion order.
    package func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    /// The entries encoded as a query string (`a=1&b=2`) with `options` — for example the
    /// canonical string a signature is computed from.
    /// - Throws: When a value cannot be encoded (e.g. a non-finite number).
    package func percentEncoded(options: ParameterEncodingOptions = .default) throws -> String {
        PercentEncoding.query(try ParameterEncoder(options: options).queryItems(self))
    }
}
