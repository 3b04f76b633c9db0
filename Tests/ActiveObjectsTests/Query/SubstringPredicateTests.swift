import Foundation
import Testing
@testable import ActiveObjects

// `.contains`, `.hasPrefix`, `.hasSuffix` (API.md §20): the text is literal — `%`, `_` and the
// escape character match themselves — and ASCII letters match in either case, as with LIKE.

final class Snippet: ModelTestRecord {
    @Column var text = ""
    @Column var note: String? = nil
}

@Suite struct SubstringPredicateTests {
    static let texts = ["50% off", "50%_off", "500 off", "a_b", "axb", #"back\slash"#, "Hello", "HELLO world", "%", "_"]

    func withSnippets<T>(_ body: () throws -> T) throws -> T {
        try withFileModelDB { _ in
            try Snippet.createTable()
            for text in Self.texts {
                let snippet = Snippet()
                snippet.text = text
                snippet.note = text
                try snippet.save()
            }
            return try body()
        }
    }

    func texts(_ query: Query<Snippet>) throws -> Set<String> { Set(try query.pluck(\.$text)) }

    @Test func wildcardsInTheTextMatchThemselves() throws {
        try withSnippets { () throws in
            #expect(try texts(Snippet.where(\.$text, .contains("50%_off"))) == ["50%_off"])
            #expect(try texts(Snippet.where(\.$text, .contains("%"))) == ["50% off", "50%_off", "%"])
            #expect(try texts(Snippet.where(\.$text, .contains("_"))) == ["50%_off", "a_b", "_"])
            #expect(try texts(Snippet.where(\.$text, .hasPrefix("a_"))) == ["a_b"])
            #expect(try texts(Snippet.where(\.$text, .hasSuffix(#"\slash"#))) == [#"back\slash"#])
            #expect(try texts(Snippet.where(\.$text, .contains(#"\"#))) == [#"back\slash"#])
            // `.like` keeps its wildcards.
            #expect(try texts(Snippet.where(\.$text, .like("a_b"))) == ["a_b", "axb"])
        }
    }

    @Test func asciiLettersMatchInEitherCaseAndOptionalColumnsWork() throws {
        try withSnippets { () throws in
            #expect(try texts(Snippet.where(\.$text, .contains("hello"))) == ["Hello", "HELLO world"])
            #expect(try texts(Snippet.where(\.$text, .hasPrefix("hello W"))) == ["HELLO world"])
            #expect(try texts(Snippet.where(\.$note, .hasSuffix("OFF"))) == ["50% off", "50%_off", "500 off"])
            #expect(try Snippet.where(\.$text, .contains("")).count() == Self.texts.count)
        }
    }

    @Test func randomTextsMatchWhatSwiftFinds() throws {
        var generator = SeededGenerator(seed: 20261126)
        let alphabet: [Character] = ["a", "A", "b", "%", "_", "\\", " "]
        try withFileModelDB { _ in
            try Snippet.createTable()
            var stored: [String] = []
            for _ in 0..<120 {
                let length = Int.random(in: 0...6, using: &generator)
                let text = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
                let snippet = Snippet()
                snippet.text = text
                try snippet.save()
                stored.append(text)
            }
            for _ in 0..<60 {
                let length = Int.random(in: 1...3, using: &generator)
                let needle = String((0..<length).map { _ in alphabet.randomElement(using: &generator)! })
                let folded = needle.lowercased()
                let cases: [(ColumnOperator<String>, (String) -> Bool, String)] = [
                    (.contains(needle), { $0.lowercased().contains(folded) }, "contains"),
                    (.hasPrefix(needle), { $0.lowercased().hasPrefix(folded) }, "hasPrefix"),
                    (.hasSuffix(needle), { $0.lowercased().hasSuffix(folded) }, "hasSuffix"),
                ]
                for (comparison, expected, name) in cases {
                    let found = try Snippet.where(\.$text, comparison).count()
                    let wanted = stored.filter(expected).count
                    if found != wanted { Issue.record("\(name)(\(needle.debugDescription)): \(found) rows, Swift finds \(wanted)") }
                }
            }
        }
    }
}
