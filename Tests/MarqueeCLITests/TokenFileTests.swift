import Foundation
import MarqueeClient
import Testing

@testable import MarqueeCLI

/// Reading token files: lines of any length and ending, CSV quoting, JSON Lines fields.
@Suite("token files")
struct TokenFileTests {
    @Test("lines end in LF or CRLF, the last may have none; an overlong line is cut and flagged; offsets count bytes")
    func lines() throws {
        let text = "a,b\r\nsecond\n" + String(repeating: "x", count: 50) + "\nlast"
        let url = try temporaryFile("lines.txt", contents: text)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var reader = LineReader(handle: handle, chunkSize: 7, maximumLineBytes: 20)
        var lines: [LineReader.Line] = []
        while let line = try reader.next() { lines.append(line) }
        #expect(lines.map(\.text) == ["a,b", "second", String(repeating: "x", count: 20), "last"])
        #expect(lines.map(\.number) == [1, 2, 3, 4])
        #expect(lines.map(\.truncated) == [false, false, true, false])
        #expect(lines.last?.offset == Int64(text.utf8.count))
        #expect(lines.first?.offset == 5)
    }

    @Test("CSV fields follow RFC 4180 quoting")
    func csvFields() {
        #expect(TokenRowParser.csvFields(#"a,"b,c","say ""hi""",,d"#) == ["a", "b,c", #"say "hi""#, "", "d"])
        #expect(TokenRowParser.csvFields(#"a,"open"#) == nil)
    }

    @Test("headers match without case or separators; an unknown column refuses the file")
    func header() throws {
        var parser = TokenRowParser(
            format: .csv,
            defaults: .init(environment: .sandbox, attributesType: "MatchAttributes")
        )
        try parser.readHeader("Token, Attributes Type ,ios-version,frequent_pushes_enabled")
        let item = try parser.item("abcd,LiveScore,17.2,yes").get()
        #expect(item.token == "abcd" && item.attributesType == "LiveScore" && item.iosVersion == "17.2")
        #expect(item.environment == .sandbox && item.frequentPushesEnabled == true)
        #expect(throws: CLIFailure.self) {
            var other = parser
            try other.readHeader("token,colour")
        }
    }

    @Test("JSON Lines rows: booleans must be booleans, tags an array, unknown fields refused")
    func jsonRows() throws {
        let parser = TokenRowParser(format: .jsonl, defaults: .init(environment: nil, attributesType: nil))
        let row =
            #"""
            {"token":"ab","environment":"production","attributesType":"M","frequentPushesEnabled":false,\#
            "userID":null}
            """#
        let item = try parser.item(row).get()
        #expect(item.environment == .production && item.frequentPushesEnabled == false && item.userID == nil)
        #expect(throws: TokenRowParser.RowError(field: "frequentPushesEnabled", detail: "expected true or false")) {
            try parser.item(#"{"token":"ab","environment":"sandbox","attributesType":"M","frequentPushesEnabled":1}"#)
                .get()
        }
        #expect(throws: TokenRowParser.RowError(field: "environment", detail: "missing (or give --environment)")) {
            try parser.item(#"{"token":"ab","attributesType":"M"}"#).get()
        }
        #expect(
            (try? parser.item(#"{"token":"ab","environment":"sandbox","attributesType":"M","colour":"red"}"#).get())
                == nil
        )
    }
}
