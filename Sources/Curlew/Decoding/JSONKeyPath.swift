/// A parsed key path such as `resp.data`, `data.user.friends`, `items[2].id` or `[0]`.
///
/// `package`: `CurlewTesting`'s generated mocks place a body at an endpoint's key path, parsed
/// exactly as decoding parses it.
package struct JSONKeyPath: Sendable, Hashable, CustomStringConvertible {
    package enum Component: Sendable, Hashable {
        case key(String)
        case index(Int)
    }

    package let components: [Component]

    /// A path of these components.
    init(components: [Component]) {
        self.components = components
    }

    /// Parses dotted keys and `[n]` indices. Returns `nil` for an empty or malformed path
    /// (`a..b`, `a[x]`, `a[`, `a.`).
    package init?(_ text: String) {
        var components: [Component] = []
        var rest = Substring(text)
        var expectKey = true
        while !rest.isEmpty {
            if rest.first == "[" {
                guard let close = rest.firstIndex(of: "]"),
                    let index = Int(rest[rest.index(after: rest.startIndex)..<close]), index >= 0
                else { return nil }
                components.append(.index(index))
                rest = rest[rest.index(after: close)...]
                expectKey = false
                if rest.first == "." {
                    rest = rest.dropFirst()
                    expectKey = true
                    if rest.isEmpty { return nil }
                }
                continue
            }
            guard expectKey || components.isEmpty else { return nil }
            let end = rest.firstIndex { $0 == "." || $0 == "[" } ?? rest.endIndex
            let key = rest[..<end]
            guard !key.isEmpty else { return nil }
            components.append(.key(String(key)))
            rest = rest[end...]
            expectKey = false
            if rest.first == "." {
                rest = rest.dropFirst()
                expectKey = true
                if rest.isEmpty { return nil }
            }
        }
        guard !components.isEmpty else { return nil }
        self.components = components
    }

    /// `resp.data[3]`.
    package var description: String { Self.render(components) }

    static func render(_ components: some Sequence<Component>) -> String {
        var text = ""
        for component in components {
            switch component {
            case .key(let key): text += text.isEmpty ? key : "." + key
            case .index(let index): text += "[\(index)]"
            }
        }
        return text
    }

    /// Joins a prefix and a relative path: `resp.data` + `[3].id` → `resp.data[3].id`.
    static func join(_ prefix: String, _ path: String) -> String {
        if prefix.isEmpty { return path }
        if path.isEmpty { return prefix }
        return path.hasPrefix("[") ? prefix + path : prefix + "." + path
    }
}
