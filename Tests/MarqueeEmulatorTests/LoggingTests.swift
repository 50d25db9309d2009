import Logging
import MarqueeCore
import MarqueeEmulator
import Synchronization
import Testing

extension EmulatorTests {
    @Suite("Logging: what the emulator tells its logger, and what it never does")
    struct LoggingTests {
        @Test(
            """
            Rejections are logged at debug with their reason; device tokens show their last 8 characters, \
            provider tokens nothing
            """
        )
        func rejectionsWithoutSecrets() async throws {
            let records = LogRecords()
            let logger = Logger(label: "test.emulator") { _ in RecordingLogHandler(records: records) }
            try await EmulatorFixture.with({ $0.logger = logger }) { fixture in
                let device = try fixture.emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: EmulatorFixture.bundleID
                )
                let (_, bearer) = try fixture.bearer()
                let client = try await fixture.connect()
                // Another app's topic: DeviceTokenNotForTopic, after the token was checked.
                let response = try await client.send(
                    path: "/3/device/\(device.deviceToken)",
                    headers: [("authorization", bearer), ("apns-topic", "com.example.other")],
                    body: #"{"aps":{"alert":"hi"}}"#
                )
                #expect(response.reason == "DeviceTokenNotForTopic")
                await client.close()

                let logged = records.all
                let rejection = try #require(logged.first { $0.message == "rejected" })
                #expect(rejection.level == .debug)
                #expect(rejection.metadata["apns.reason"] == "DeviceTokenNotForTopic")
                #expect(rejection.metadata["http.path"] == "/3/device/…\(device.deviceToken.suffix(8))")
                let everything = logged.map { "\($0.message) \($0.metadata)" }.joined(separator: "\n")
                #expect(!everything.contains(device.deviceToken))
                #expect(!everything.contains(String(bearer.dropFirst("bearer ".count))))
                #expect(logged.allSatisfy { $0.level <= .debug })
            }
        }
    }
}

/// Log records kept for a test to read.
final class LogRecords: Sendable {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let records = Mutex<[Record]>([])

    var all: [Record] { records.withLock { $0 } }

    func append(_ record: Record) { records.withLock { $0.append(record) } }
}

struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        records.append(.init(level: event.level, message: "\(event.message)", metadata: merged.mapValues { "\($0)" }))
    }
}
