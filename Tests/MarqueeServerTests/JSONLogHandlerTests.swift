import Foundation
import Logging
import MarqueeServer
import Synchronization
import Testing

/// Lines a handler wrote, kept for a test to read.
final class CapturedLines: Sendable {
    private let lines = Mutex<[String]>([])

    var output: JSONLogHandler.Output {
        JSONLogHandler.Output { line in self.lines.withLock { $0.append(line) } }
    }

    var all: [String] { lines.withLock { $0 } }

    /// Each line as a JSON object (a line that is not one fails the test).
    func objects() throws -> [[String: Any]] {
        try all.map { line in
            #expect(line.hasSuffix("\n") && line.dropLast().firstIndex(of: "\n") == nil, "not one line: \(line)")
            return try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                "not a JSON object: \(line)"
            )
        }
    }
}

@Suite("JSON log lines")
struct JSONLogHandlerTests {
    /// 2026-11-28T15:00:00.123Z
    static let instant = Date(timeIntervalSince1970: 1_795_878_000.123)

    static func logger(
        _ captured: CapturedLines,
        provider: Logger.MetadataProvider? = nil,
        level: Logger.Level = .info
    ) -> Logger {
        var logger = Logger(label: "marquee.test") { label in
            JSONLogHandler(label: label, output: captured.output, metadataProvider: provider, now: { instant })
        }
        logger.logLevel = level
        return logger
    }

    @Test("one JSON object per line: timestamp (ISO 8601, UTC, milliseconds), level, label, message, then metadata")
    func fields() throws {
        let captured = CapturedLines()
        Self.logger(captured).info("channel created", metadata: ["channel.id": "c1"])
        let line = try #require(captured.all.first)
        let expected = #"""
            {"timestamp":"2026-11-28T15:00:00.123Z","level":"info","label":"marquee.test",\#
            "message":"channel created","channel.id":"c1"}
            """#
        #expect(line == expected + "\n")
        #expect(try Self.timestamp(at: Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(try Self.timestamp(at: Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
        #expect(try Self.timestamp(at: Date(timeIntervalSince1970: 951_782_400.999)) == "2000-02-29T00:00:00.999Z")
    }

    /// The `timestamp` field of a line logged at `date`.
    static func timestamp(at date: Date) throws -> String? {
        let captured = CapturedLines()
        let logger = Logger(label: "t") {
            JSONLogHandler(label: $0, output: captured.output, metadataProvider: nil, now: { date })
        }
        logger.info("tick")
        return try captured.objects().first?["timestamp"] as? String
    }

    @Test("quotes, backslashes, newlines and control characters are escaped; UTF-8 stays as it is")
    func escaping() throws {
        let captured = CapturedLines()
        let message = "He said \"goal!\"\\ then\nleft\t\r\u{01}\u{1F} — Jürgen ⚽️"
        Self.logger(captured).warning("\(message)", metadata: ["detail": "a\"b\nc", "key\"quoted": "x"])
        let line = try #require(captured.all.first)
        #expect(!line.dropLast().contains("\n"))
        #expect(line.contains(#"\u0001"#) && line.contains(#"\u001f"#) && line.contains("Jürgen ⚽️"))
        let object = try #require(try captured.objects().first)
        #expect(object["message"] as? String == message)
        #expect(object["detail"] as? String == "a\"b\nc")
        #expect(object["key\"quoted"] as? String == "x")
        #expect(object["level"] as? String == "warning")
    }

    @Test("metadata is flattened to dotted keys; the call's beats the provider's, which beats the logger's")
    func mergeOrder() throws {
        let captured = CapturedLines()
        let provider = Logger.MetadataProvider {
            ["job.id": "from-provider", "trace": "t1", "request": ["id": "provider-request"]]
        }
        var logger = Self.logger(captured, provider: provider)
        logger[metadataKey: "request.id"] = "r1"
        logger[metadataKey: "job.id"] = "from-logger"
        logger[metadataKey: "app"] = ["id": "a1", "limits": ["channels": "10"]]
        logger.info("merged", metadata: ["job": ["id": "from-call"], "tags": ["x", "y"], "count": "\(3)"])
        let object = try #require(try captured.objects().first)
        #expect(object["job.id"] as? String == "from-call")
        #expect(object["request.id"] as? String == "provider-request")
        #expect(object["trace"] as? String == "t1")
        #expect(object["app.id"] as? String == "a1")
        #expect(object["app.limits.channels"] as? String == "10")
        #expect(object["tags"] as? [String] == ["x", "y"])
        #expect(object["count"] as? String == "3")
        #expect(object["app"] == nil && object["job"] == nil)
        // Keys in order after the fixed four, so that lines diff well.
        let line = try #require(captured.all.first)
        let keys = [
            "\"app.id\"", "\"app.limits.channels\"", "\"count\"", "\"job.id\"", "\"request.id\"", "\"tags\"",
            "\"trace\"",
        ]
        let positions = keys.compactMap { line.range(of: $0)?.lowerBound }
        #expect(positions.count == keys.count && positions == positions.sorted())
    }

    @Test("a metadata key equal to a fixed field is renamed, never written twice")
    func reservedKeys() throws {
        let captured = CapturedLines()
        Self.logger(captured).error("the real message", metadata: ["message": "shadow", "level": "shadow"])
        let object = try #require(try captured.objects().first)
        #expect(object["message"] as? String == "the real message")
        #expect(object["level"] as? String == "error")
        #expect(object["metadata.message"] as? String == "shadow")
        #expect(object["metadata.level"] as? String == "shadow")
    }

    @Test("values of keys that name secrets are redacted; push tokens keep their last 8 characters")
    func secrets() throws {
        let captured = CapturedLines()
        let token = "8f2a6c0d9e1b4a7c3f5e2d8b6a4c1e9f7d3b5a2c8e6f4d1b9a7c5e3f2d8b6a4c"
        Self.logger(captured).info(
            "redaction",
            metadata: [
                "http.authorization": "Bearer mq_abc_secret",
                "api_key": "mq_abc_secret",
                "database.password": "hunter2",
                "secrets.master_key": "k1:AAAA",
                "apns": ["private-key": "-----BEGIN PRIVATE KEY-----"],
                "push_token": "\(token)",
                "api_key.prefix": "mq_abc",
            ]
        )
        let line = try #require(captured.all.first)
        for secret in ["mq_abc_secret", "hunter2", "k1:AAAA", "BEGIN PRIVATE KEY", token] {
            #expect(!line.contains(secret), "the line shows \(secret)")
        }
        let object = try #require(try captured.objects().first)
        #expect(object["http.authorization"] as? String == "[redacted]")
        #expect(object["apns.private-key"] as? String == "[redacted]")
        #expect(object["push_token"] as? String == "…" + token.suffix(8))
        #expect(object["api_key.prefix"] as? String == "mq_abc")
    }

    @Test("the level is the logger's: below it nothing is written; an error value becomes `error`")
    func levelAndError() throws {
        struct Failure: Error, CustomStringConvertible { var description: String { "store down" } }
        let captured = CapturedLines()
        let logger = Self.logger(captured, level: .notice)
        logger.info("dropped")
        logger.debug("dropped")
        logger.critical("kept", error: Failure())
        #expect(captured.all.count == 1)
        let object = try #require(try captured.objects().first)
        #expect(object["message"] as? String == "kept")
        #expect(object["level"] as? String == "critical")
        #expect((object["error"] as? String)?.contains("store down") == true)
    }
}
