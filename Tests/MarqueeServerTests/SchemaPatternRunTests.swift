import Foundation
import MarqueeAPI
import Testing

@testable import MarqueeServer

/// The contract's patterns that are one run of a character class are read without a regular
/// expression; what such a reading accepts, the expression matches.
@Suite("Schema patterns read as a run of a class")
struct SchemaPatternRunTests {
    static let samples: [String] = [
        "", "a", "match-2026:final.1", "arsenal v chelsea", "8f2a6c0d9e1b4a7c", "8F2A6C", "abc", "8f2a6c0d9e1b4a7",
        "key_0123456789abcdef0123456789abcdef", "app_0123456789ABCDEF0123456789abcdef", "MatchAttributes",
        "_Match.Attributes", "9Match", "18.2", "17.2.1", "1.2.3.4", "ABCDE12345", "abcde12345", "com.example.app",
        "x\n", "match\n", "caf\u{e9}", "a\u{0}b", "\u{1F3C6}", String(repeating: "a", count: 200),
        String(repeating: "a", count: 201), String(repeating: "ab", count: 200), String(repeating: "ab", count: 201),
        "0123", "12345",
    ]

    /// Every `pattern:` of the OpenAPI document.
    static var documentPatterns: [String] {
        guard let yaml = MarqueeAPIDocument.yaml() else { return [] }
        let expression = try? NSRegularExpression(pattern: #"pattern: '([^']*)'"#)
        let range = NSRange(yaml.startIndex..<yaml.endIndex, in: yaml)
        let found = expression?.matches(in: yaml, range: range).compactMap { match in
            Range(match.range(at: 1), in: yaml).map { String(yaml[$0]) }
        }
        return Array(Set(found ?? [])).sorted()
    }

    @Test("on every pattern of the document, what the run accepts the expression matches")
    func neverAcceptsWhatTheExpressionRefuses() throws {
        let patterns = Self.documentPatterns
        #expect(patterns.count > 10)
        for pattern in patterns {
            guard let run = SchemaPatternRun(pattern) else { continue }
            let expression = try NSRegularExpression(pattern: pattern)
            for sample in Self.samples where run.accepts(sample) {
                let range = NSRange(sample.startIndex..<sample.endIndex, in: sample)
                #expect(
                    expression.firstMatch(in: sample, range: range) != nil,
                    "\(pattern) accepted \(sample.debugDescription)"
                )
            }
        }
    }

    @Test("the patterns of event keys, tokens, IDs and attribute types are read, and take their values")
    func readsTheHotPatterns() throws {
        let accepted: [(pattern: String, value: String)] = [
            ("^[A-Za-z0-9._:-]{1,200}$", "match-2026:final.1"),
            ("^([0-9a-fA-F]{2}){1,200}$", "8f2a6c0d9e1b4a7c"),
            ("^key_[0-9a-fA-F]{32}$", "key_0123456789abcdef0123456789abcdef"),
            ("^[A-Za-z_][A-Za-z0-9_.]{0,127}$", "MatchAttributes"),
            (#"^[^\x00]*$"#, "caf\u{e9} \u{1F3C6}"),
        ]
        // `^key_…` has a literal prefix, `^[A-Za-z_][…]` two classes: left to the expression.
        for (pattern, value) in accepted {
            let run = SchemaPatternRun(pattern)
            if pattern.hasPrefix("^key_") || pattern.hasPrefix("^[A-Za-z_][") {
                #expect(run == nil, "\(pattern)")
            } else {
                #expect(run?.accepts(value) == true, "\(pattern) \(value)")
            }
            #expect(SchemaPattern(pattern).matches(value), "\(pattern) \(value)")
        }
        let hex = try #require(SchemaPatternRun("^([0-9a-fA-F]{2}){1,200}$"))
        #expect(!hex.accepts("abc"))
        #expect(!hex.accepts(""))
        #expect(!hex.accepts(String(repeating: "ab", count: 201)))
        let key = try #require(SchemaPatternRun("^[A-Za-z0-9._:-]{1,200}$"))
        #expect(!key.accepts("match\n"), "a final line break is the expression's to judge")
        #expect(SchemaPattern("^[A-Za-z0-9._:-]{1,200}$").matches("match\n") == true, "ICU's $ takes it")
        #expect(!SchemaPattern("^[A-Za-z0-9._:-]{1,200}$").matches("match v"))
        #expect(!SchemaPattern(#"^[^\x00]*$"#).matches("a\u{0}b"))
    }

    @Test("other shapes are not read: alternatives, groups of several parts, classes with set operations")
    func leavesTheRest() {
        for pattern in [
            "^(17\\.([2-9]|[1-9][0-9]))$", "^[0-9]{1,4}(\\.[0-9]{1,4}){0,2}$", "^[a-z&&[^x]]+$", "^[\\d]+$", "[a-z]+",
            "^[a-z]+", "^[^a]{1,3}$",
        ] {
            #expect(SchemaPatternRun(pattern) == nil, "\(pattern)")
        }
    }
}
