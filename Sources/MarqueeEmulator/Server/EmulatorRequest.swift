import MarqueeCore
import NIOHPACK

/// One HTTP/2 request, collected from its HEADERS and DATA frames.
struct EmulatorRequest {
    var method: String
    var path: String
    var headers: HPACKHeaders
    /// The body, up to one byte more than the largest payload any endpoint accepts; `bodyLength`
    /// counts every byte received.
    var body: [UInt8] = []
    var bodyLength = 0

    /// The largest body kept in memory; anything beyond is only counted (and answered with 413).
    static let bodyRetentionLimit = APNSPayloadLimit.voip + 1

    init(headers: HPACKHeaders) {
        self.method = headers.first(name: ":method") ?? ""
        self.path = headers.first(name: ":path") ?? ""
        self.headers = headers
    }

    mutating func appendBody(_ bytes: some Collection<UInt8>) {
        bodyLength += bytes.count
        let room = Self.bodyRetentionLimit - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
    }

    func header(_ name: String) -> String? {
        headers.first(name: name)
    }

    /// The first of `names` (at most 64) that appears more than once (APNs: `DuplicateHeaders`).
    /// A bit mask instead of a set: this runs on every request.
    func duplicatedHeader(among names: [String]) -> String? {
        var seen: UInt64 = 0
        for (name, _, _) in headers {
            guard let index = names.firstIndex(of: name), index < 64 else { continue }
            let bit: UInt64 = 1 << UInt64(index)
            if seen & bit != 0 { return name }
            seen |= bit
        }
        return nil
    }
}

/// The answer to one request.
struct EmulatorResponse: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8] = []
    /// Whether the request carried a provider token the emulator accepted (it raises the
    /// connection's stream limit).
    var authenticated = false
    /// An injected fault's added latency.
    var delay: Duration? = nil
    /// An injected connection reset instead of an answer.
    var resetsConnection = false

    static func error(
        _ reason: APNSErrorReason,
        idHeader: String,
        id: String,
        status: Int? = nil,
        reasonString: String? = nil,
        timestamp: Int64? = nil
    ) -> EmulatorResponse {
        var body = Array("{\"reason\":".utf8)
        JSONValue.writeString(reasonString ?? reason.reasonString, into: &body)
        if let timestamp { body.append(contentsOf: ",\"timestamp\":\(timestamp)".utf8) }
        body.append(UInt8(ascii: "}"))
        return EmulatorResponse(
            status: status ?? reason.status ?? 400,
            headers: [("content-type", "application/json"), (idHeader, id)],
            body: body
        )
    }
}
