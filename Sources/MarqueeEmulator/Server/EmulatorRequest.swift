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

    /// The headers every endpoint reads, picked out in one pass over the block (a look-up per
    /// header would scan it a dozen times per request).
    private var known = KnownHeaders()

    init(headers: HPACKHeaders) {
        self.headers = headers
        self.method = ""
        self.path = ""
        for (name, value, _) in headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            default: known.record(name: name, value: value)
            }
        }
    }

    mutating func appendBody(_ bytes: some Collection<UInt8>) {
        bodyLength += bytes.count
        let room = Self.bodyRetentionLimit - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
    }

    func header(_ name: String) -> String? {
        if let index = KnownHeaders.names.firstIndex(of: name) { return known.values[index] }
        return headers.first(name: name)
    }

    /// The first APNs header that appeared more than once (APNs: `DuplicateHeaders`).
    var duplicatedHeader: String? { known.duplicated }

    /// Trailers extend the block.
    mutating func addTrailers(_ trailers: HPACKHeaders) {
        headers.add(contentsOf: trailers)
        for (name, value, _) in trailers { known.record(name: name, value: value) }
    }
}

/// The headers APNs defines, each of which may appear once.
struct KnownHeaders {
    static let names = [
        "authorization", "apns-id", "apns-request-id", "apns-push-type", "apns-topic", "apns-priority",
        "apns-expiration", "apns-collapse-id", "apns-channel-id",
    ]

    var values: [String?] = Array(repeating: nil, count: names.count)
    var duplicated: String?

    mutating func record(name: String, value: String) {
        guard let index = Self.names.firstIndex(of: name) else { return }
        if values[index] != nil {
            if duplicated == nil { duplicated = name }
        } else {
            values[index] = value
        }
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
