import Curlew
import CurlewTesting
import Foundation
import Testing

/// A model that contains itself (a comment with replies, a category with subcategories) is
/// generated as a finite tree; one that requires itself fails with `.mockGenerationFailed`.
@Suite("Generated mocks of recursive models")
struct RecursiveMockTests {
    struct Comment: Decodable, Sendable {
        var text: String
        var replies: [Comment]
        var parent: Box?
    }

    final class Box: Decodable, Sendable {
        let comment: Comment
    }

    final class Chain: Decodable, Sendable {
        let next: Chain
    }

    static func depth(_ comment: Comment) -> Int {
        1 + (comment.replies.map(depth).max() ?? 0)
    }

    @Test func aTreeOfItselfEnds() throws {
        let comment = try MockGenerator().value(of: Comment.self)
        #expect((2...3).contains(Self.depth(comment)))
        #expect(!comment.text.isEmpty)
    }

    @Test func aModelThatRequiresItselfIsRefused() {
        let error = #expect(throws: CurlewError.self) { try MockGenerator().value(of: Chain.self) }
        #expect(error?.code == .mockGenerationFailed)
    }
}
