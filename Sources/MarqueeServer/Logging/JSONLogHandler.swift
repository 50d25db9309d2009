import Foundation
import Logging

/// swift-log's handler for `log.format json`: one JSON object per line, for log collectors (Loki,
/// Elasticsearch, CloudWatch) that index fields rather than parse text.
///
/// ```json
/// {"timestamp":"2026-11-28T15:00:00.123Z","level":"info","label":"marquee","message":"fan-out
/// completed","job.id":"…","request.id":"…"}
/// ```
///
/// The four fixed fields come first, then the metadata flattened to dotted keys in key order:
/// `["request": ["id": "r1"]]` and `["request.id": "r1"]` both become `"request.id":"r1"`. Where
/// sources give the same key, the later wins: the logger's own metadata, then the metadata
/// provider's, then the call's (as in swift-log's `StreamLogHandler`). A metadata key equal to a
/// fixed field is written as `metadata.<key>`, so that every line has each key once.
///
/// Secrets are never meant to reach a logger, but a key that names one (`authorization`,
/// `password`, `secret`, `private_key`, `master_key`, `api_key`, `bearer_token`, `jwt`) has its value
/// replaced by `[redacted]`, and one that names a push or device token (`token`, `push_token`,
/// `device_token`) keeps its last 8 characters, as Marquee logs tokens anyway.
public struct JSONLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public let label: String
    private let output: Output
    private let now: @Sendable () -> Date

    /// Where lines go: each call gets one whole line, newline included, so that lines written
    /// from several threads never interleave (standard error receives each in one `write`).
    public struct Output: Sendable {
        let write: @Sendable (String) -> Void

        public init(_ write: @escaping @Sendable (String) -> Void) {
            self.write = write
        }

        public static var standardError: Output {
            Output { line in FileHandle.standardError.write(Data(line.utf8)) }
        }
    }

    /// - Parameters:
    ///   - now: the clock of the `timestamp` field (tests fix it).
    public init(
        label: String,
        output: Output = .standardError,
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.label = label
        self.output = output
        self.metadataProvider = metadataProvider
        self.now = now
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        output.write(line(for: event) + "\n")
    }

    /// The JSON object of one event, without the newline.
    func line(for event: LogEvent) -> String {
        var fields: [String: String] = [:]
        Self.flatten(metadata, into: &fields)
        if let provided = metadataProvider?.get() { Self.flatten(provided, into: &fields) }
        if let explicit = event.metadata { Self.flatten(explicit, into: &fields) }
        if let error = event.error, fields["error"] == nil {
            fields["error"] = Self.quoted(String(reflecting: error))
        }
        var line = "{\"timestamp\":\""
        line.reserveCapacity(160 + fields.count * 32)
        line += Self.timestamp(now())
        line += "\",\"level\":\""
        line += event.level.rawValue
        line += "\",\"label\":"
        line += Self.quoted(label)
        line += ",\"message\":"
        line += Self.quoted(event.message.description)
        for key in fields.keys.sorted() {
            line += ","
            line += Self.quoted(Self.fixedFields.contains(key) ? "metadata." + key : key)
            line += ":"
            line += fields[key] ?? "null"
        }
        line += "}"
        return line
    }

    static let fixedFields: Set<String> = ["timestamp", "level", "label", "message"]
}
