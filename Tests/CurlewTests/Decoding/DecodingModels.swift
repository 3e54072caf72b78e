import Curlew

/// A model whose `validate()` checks its id and its width (the validation tests).
struct Ranged: Decodable, Sendable, ValidatableModel {
    var id: String
    var width: Int
    func validate() throws {
        if id.isEmpty { throw ValidationFailure("must not be empty", field: "id") }
        if !(1...10_000).contains(width) { throw ValidationFailure("expected 1...10000, found \(width)", field: "width") }
    }
}
