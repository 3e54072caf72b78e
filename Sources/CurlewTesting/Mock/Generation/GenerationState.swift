import Curlew
internal import Foundation

/// What every decoder of one generation run shares: the settings, the attempt (a retry after a
/// value failed validation changes every value), and the client decoder's strategies.
final class GenerationState {
    let generator: MockGenerator
    let attempt: Int
    let snakeCaseKeys: Bool

    init(generator: MockGenerator, attempt: Int) {
        self.generator = generator
        self.attempt = attempt
        if case .convertFromSnakeCase = generator.decoder.keyDecodingStrategy { snakeCaseKeys = true } else { snakeCaseKeys = false }
    }

    /// The random source for the value at `path`.
    func random(_ path: String) -> SeededRandom {
        SeededRandom(seed: generator.seed, attempt: attempt, path: path)
    }

    /// The JSON key for a coding key (snake case when the decoder converts from it).
    func jsonKey(_ key: String) -> String {
        snakeCaseKeys ? Self.snakeCase(key) : key
    }

    /// Decodes `T` from a JSON value with the client's decoder, so strategies apply.
    func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        let data = try JSONEncoder().encode([value])
        let values = try generator.decoder.decode([T].self, from: data)
        guard let first = values.first else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "no value"))
        }
        return first
    }

    /// `imageURL` → `image_url`, `createdAt` → `created_at` (Foundation's `convertToSnakeCase`).
    static func snakeCase(_ key: String) -> String {
        let characters = Array(key)
        var words: [String] = []
        var current = ""
        for (index, character) in characters.enumerated() {
            let isUpper = character.isUppercase
            let previousLower = index > 0 && !characters[index - 1].isUppercase
            let nextLower = index + 1 < characters.count && characters[index + 1].isLowercase
            if isUpper, !current.isEmpty, previousLower || nextLower {
                words.append(current)
                current = ""
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words.map { $0.lowercased() }.joined(separator: "_")
    }
}
