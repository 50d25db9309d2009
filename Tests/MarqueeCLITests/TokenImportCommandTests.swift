import Foundation
import MarqueeTesting
import Testing

/// `marquee tokens import`: files of tokens streamed in batches, bad rows reported by line.
@Suite("marquee tokens import")
struct TokenImportCommandTests {
    static func token(_ index: Int) -> String { String(format: "%064x", index) }

    @Test(
        """
        a CSV file is imported in batches; the row the file refuses and the row the server refuses are reported \
        by line, exit 7
        """,
        arguments: TestBackend.allCases
    )
    func csv(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            var lines = ["token,environment,attributes_type,userID,tags,iosVersion"]
            for index in 1...25 {
                lines.append("\(Self.token(index)),sandbox,MatchAttributes,user-\(index),\"arsenal;london\",18.2")
            }
            lines[5] = "\(Self.token(5)),staging,MatchAttributes,user-5,arsenal,18.2"  // line 6: the file's own error
            // Line 13: the server refuses it.
            lines[12] = "not-a-hex-token,sandbox,MatchAttributes,user-12,arsenal,18.2"
            let file = try temporaryFile("tokens.csv", contents: lines.joined(separator: "\r\n") + "\r\n")

            let run = await server.cli(key: app.appKey)("tokens", "import", file.path, "--batch-size", "10")
            #expect(run.code == 7, "\(run)")
            #expect(
                run.standardOutput.hasPrefix("Imported 23 tokens from \(file.path) (25 rows, 2 rejected)"),
                "\(run)"
            )
            #expect(
                run.standardError.contains(#"rejected line 6: environment: "staging" is not sandbox or production"#),
                "\(run)"
            )
            #expect(run.standardError.contains("rejected line 13: token: must be the token as hex"), "\(run)")
            #expect(!run.standardError.contains("\u{1B}["), "no progress bar when standard error is not a terminal")

            let shown = await server.cli(key: app.appKey)(
                "tokens",
                "show",
                Self.token(20),
                "--environment",
                "sandbox",
                "--attributes-type",
                "MatchAttributes",
                "--json"
            )
            #expect(shown.code == 0, "\(shown)")
            #expect(shown.json["userID"] as? String == "user-20")
            #expect(shown.json["tags"] as? [String] == ["arsenal", "london"])
            #expect(
                await server.cli(key: app.appKey)(
                    "tokens",
                    "show",
                    Self.token(5),
                    "--environment",
                    "sandbox",
                    "--attributes-type",
                    "MatchAttributes"
                ).code == 4
            )
        }
    }

    @Test(
        "a JSON Lines file with defaults from flags; a bad line is reported, the summary is JSON for scripts",
        arguments: TestBackend.allCases
    )
    func jsonLines(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            var lines = (1...7).map { #"{"token":"\#(Self.token(100 + $0))","iosVersion":"17.4","tags":["chelsea"]}"# }
            lines.insert(#"{"token": "abc", "tags": "chelsea""#, at: 3)  // line 4: not JSON
            lines.append("")  // blank lines are skipped
            let file = try temporaryFile("tokens.jsonl", contents: lines.joined(separator: "\n"))

            let run = await server.cli(key: app.appKey)(
                "tokens",
                "import",
                file.path,
                "--environment",
                "sandbox",
                "--attributes-type",
                "MatchAttributes",
                "--batch-size",
                "3",
                "--json"
            )
            #expect(run.code == 7, "\(run)")
            #expect(run.json["registered"] as? Int == 7)
            #expect(run.json["rows"] as? Int == 8)
            #expect(run.json["complete"] as? Bool == true)
            let rejections = try #require(run.json["rejections"] as? [[String: Any]])
            #expect(rejections.count == 1)
            #expect(rejections.first?["line"] as? Int == 4)
            #expect(rejections.first?["detail"] as? String == "not a JSON object")

            let delete = await server.cli(key: app.appKey)(
                "tokens",
                "delete",
                Self.token(101),
                "--environment",
                "sandbox",
                "--attributes-type",
                "MatchAttributes"
            )
            #expect(delete.code == 0, "\(delete)")
        }
    }

    @Test(
        "a file of good rows imports with exit 0; with a terminal the progress bar is drawn on standard error",
        arguments: [TestBackend.sqlite]
    )
    func progressOnTerminal(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let rows = (1...2500).map { "\(Self.token(1000 + $0)),sandbox,MatchAttributes" }
            let file = try temporaryFile(
                "many.csv",
                contents: (["token,environment,attributesType"] + rows).joined(separator: "\n")
            )
            var cli = server.cli(key: app.appKey)
            cli.standardErrorIsTerminal = true
            let run = await cli("tokens", "import", file.path)
            #expect(run.code == 0, "\(run)")
            #expect(run.standardOutput.hasPrefix("Imported 2,500 tokens"))
            #expect(run.standardError.contains("100%"), "\(run)")
            #expect(run.standardError.contains("2,500 tokens"))
            #expect(run.standardError.hasSuffix("\n"), "the finished bar stays, the cursor on the next line")
        }
    }
}
