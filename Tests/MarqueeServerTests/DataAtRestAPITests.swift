import Foundation
import Logging
import MarqueeServer
import MarqueeTesting
import Testing

/// What a running server leaves where others could read it: its log lines never hold a whole push
/// token, whatever the level, and the embedded store's files are its owner's alone.
@Suite("Data at rest")
struct DataAtRestAPITests {
    static let token = "8f2a6c0d9e1b4a7c3f5e2d8b6a4c1e9f7d3b5a2c8e6f4d1b9a7c5e3f2d8b6a4c"

    @Test("at debug level no log line holds a whole push token, though request paths carry them")
    func tokensShortenedInLogs() async throws {
        let recorder = FlightRecorder(capacity: 10_000)
        try await TestServer.run(.sqlite, logger: recorder.logger(level: .debug)) { server in
            let app = try await server.makeApp()
            let path = "/v1/push-to-start-tokens/\(Self.token)"
            let registered = try await server.client.send(
                "PUT",
                path,
                key: app.appKey,
                json: ["environment": "sandbox", "attributesType": "MatchAttributes", "iosVersion": "18.2"]
            )
            #expect(registered.status == 200)
            _ = try await server.client.send(
                "GET",
                path + "?environment=sandbox&attributesType=MatchAttributes",
                key: app.appKey
            )
            _ = try await server.client.send(
                "GET",
                path + "?environment=sandbox&attributesType=MatchAttributes",
                key: "mq_000000000000_wrongwrongwrongwrong"
            )
        }
        let lines = recorder.lines
        #expect(
            lines.contains { $0.contains("…" + Self.token.suffix(8)) },
            "the request lines name the token by its end"
        )
        #expect(
            !lines.contains { $0.lowercased().contains(Self.token) },
            "\(lines.filter { $0.lowercased().contains(Self.token) })"
        )
    }

    @Test("the embedded store's folder is 0700 and its files 0600")
    func sqliteFilesPrivate() async throws {
        try await TestServer.withDatabase(.sqlite) { database in
            try await TestServer.run(on: database) { server in
                _ = try await server.makeApp()
                let files = FileManager.default
                let folder = try files.attributesOfItem(atPath: database.dataDirectory)[.posixPermissions] as? Int
                #expect(folder == 0o700)
                let names = try files.contentsOfDirectory(atPath: database.dataDirectory).filter {
                    $0.hasPrefix("marquee.sqlite")
                }
                #expect(names.contains("marquee.sqlite"))
                #expect(names.contains("marquee.sqlite-wal"))
                for name in names {
                    let mode =
                        try files.attributesOfItem(atPath: database.dataDirectory + "/" + name)[.posixPermissions]
                        as? Int
                    #expect(mode == 0o600, "\(name): \(String(mode ?? 0, radix: 8))")
                }
            }
        }
    }
}
