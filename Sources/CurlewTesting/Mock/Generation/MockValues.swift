internal import Foundation

/// Invents scalar values for a ``ValueGuess``.
enum MockValues {
    static let firstNames = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Linus", "Margaret", "Ken", "Dennis", "Frances", "Donald", "Radia"]
    static let lastNames = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Torvalds", "Hamilton", "Thompson", "Ritchie", "Allen", "Knuth", "Perlman"]
    static let words = [
        "harbor", "sunset", "meadow", "granite", "willow", "ember", "lagoon", "summit", "cedar", "aurora", "canyon", "drift",
        "fjord", "glacier", "heron", "island", "juniper", "kestrel", "lantern", "marsh", "nimbus", "orchard", "pebble", "quartz",
    ]
    /// 2024-01-01T00:00:00Z: generated dates fall in the year after it.
    static let epoch = 1_704_067_200

    static func text(_ guess: ValueGuess, _ random: inout SeededRandom) -> String {
        let word = random.pick(words) ?? "word"
        let number = random.int(in: 1...9999)
        switch guess {
        case .date: return iso8601(seconds: dateSeconds(&random))
        case .url: return "https://example.com/\(word)/\(number)"
        case .imageURL: return "https://images.example.com/\(word)/\(number).jpg"
        case .email: return "\((random.pick(firstNames) ?? "ada").lowercased()).\((random.pick(lastNames) ?? "lovelace").lowercased())@example.com"
        case .name: return "\(random.pick(firstNames) ?? "Ada") \(random.pick(lastNames) ?? "Lovelace")"
        case .firstName: return random.pick(firstNames) ?? "Ada"
        case .lastName: return random.pick(lastNames) ?? "Lovelace"
        case .username: return "\(word)\(number)"
        case .title: return "\(word.capitalized) \(random.pick(words) ?? "drift")"
        case .text:
            let count = random.int(in: 5...9)
            let sentence = (0..<count).map { _ in random.pick(words) ?? "word" }.joined(separator: " ")
            return sentence.prefix(1).uppercased() + sentence.dropFirst() + "."
        case .identifier: return hex(&random, digits: 12)
        case .uuid: return uuid(&random)
        case .phone: return "+1 555 01\(String(format: "%02d", random.int(in: 0...99)))"
        case .color: return "#" + hex(&random, digits: 6)
        case .currency: return random.pick(["EUR", "USD", "NZD", "JPY", "GBP"]) ?? "EUR"
        case .language: return random.pick(["en", "fr", "de", "ja", "pt"]) ?? "en"
        case .country: return random.pick(["NZ", "FR", "DE", "JP", "BR"]) ?? "NZ"
        case .city: return random.pick(["Wellington", "Lyon", "Leipzig", "Sapporo", "Recife"]) ?? "Lyon"
        case .address: return "\(random.int(in: 1...200)) \(word.capitalized) Street"
        case .postcode: return String(format: "%05d", random.int(in: 1000...99999))
        case .version: return "\(random.int(in: 1...4)).\(random.int(in: 0...20)).\(random.int(in: 0...9))"
        case .token: return hex(&random, digits: 32)
        case .status: return random.pick(["active", "pending", "archived"]) ?? "active"
        case .slug: return "\(word)-\(random.pick(words) ?? "drift")"
        case .word: return word
        case .count, .age, .year, .dimension, .duration, .rating, .percent, .latitude, .longitude:
            return String(Self.integer(guess, &random))
        case .price: return String(format: "%.2f", Self.number(guess, &random))
        case .plain: return "\(word)-\(number)"
        }
    }

    static func integer(_ guess: ValueGuess, _ random: inout SeededRandom) -> Int {
        switch guess {
        case .identifier: return random.int(in: 1000...99999)
        case .count: return random.int(in: 1...20)
        case .age: return random.int(in: 18...90)
        case .year: return random.int(in: 1990...2030)
        case .dimension: return random.int(in: 4...40) * 50
        case .duration: return random.int(in: 1...3600)
        case .rating: return random.int(in: 1...5)
        case .percent: return random.int(in: 0...100)
        case .date: return dateSeconds(&random)
        case .price: return random.int(in: 1...500)
        case .latitude: return random.int(in: -90...90)
        case .longitude: return random.int(in: -180...180)
        default: return random.int(in: 1...1000)
        }
    }

    static func number(_ guess: ValueGuess, _ random: inout SeededRandom) -> Double {
        switch guess {
        case .price: return random.number(in: 1...500)
        case .latitude: return random.number(in: -90...90)
        case .longitude: return random.number(in: -180...180)
        case .rating: return random.number(in: 0...5)
        case .percent: return random.number(in: 0...1)
        case .date: return Double(dateSeconds(&random))
        default: return random.number(in: 0...1000)
        }
    }

    static func dateSeconds(_ random: inout SeededRandom) -> Int { epoch + random.int(in: 0...31_535_999) }

    static func iso8601(seconds: Int) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    static func hex(_ random: inout SeededRandom, digits: Int) -> String {
        var text = ""
        while text.count < digits { text += String(random.next(), radix: 16) }
        return String(text.prefix(digits))
    }

    static func uuid(_ random: inout SeededRandom) -> String {
        let digits = Array(hex(&random, digits: 32).uppercased())
        let text = String(digits)
        func part(_ from: Int, _ length: Int) -> Substring { text.dropFirst(from).prefix(length) }
        return "\(part(0, 8))-\(part(8, 4))-4\(part(13, 3))-A\(part(17, 3))-\(part(20, 12))"
    }
}
