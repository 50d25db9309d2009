import MarqueeCore
import NIOHPACK

/// One HTTP/2 request, collected from its HEADERS and DATA frames.
struct EmulatorRequest {
    var method = ""
    var path = ""
    /// The body, up to one byte more than the largest payload any endpoint accepts; `bodyLength`
    /// counts every byte received.
    var body: [UInt8] = []
    var bodyLength = 0

    /// The largest body kept in memory; anything beyond is only counted (and answered with 413).
    static let bodyRetentionLimit = APNSPayloadLimit.voip + 1

    /// The APNs headers, picked out in one pass over the block (a look-up per header would scan it
    /// a dozen times per request) into fixed slots, one per `APNSRequestHeader` case (no
    /// allocation per request).
    private var apnsHeaders = InlineArray<9, String?>(repeating: nil)
    /// The first APNs header that appeared more than once (APNs: `DuplicateHeaders`).
    private(set) var duplicatedHeader: APNSRequestHeader?

    init(headers: HPACKHeaders) {
        for (name, value, _) in headers {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case "content-length": declaredContentLength = value
            default: record(name: name, value: value)
            }
        }
    }

    /// `content-length` as sent. HTTP/2 makes a body that disagrees with it a stream error; the
    /// emulator checks that itself (`contentLengthIsViolated`) rather than through NIO's verifier,
    /// which would parse the header a second time per request.
    private var declaredContentLength: String?

    /// Whether the request declared a `content-length` its body does not have.
    var contentLengthIsViolated: Bool {
        guard let declaredContentLength else { return false }
        return Int(declaredContentLength) != bodyLength
    }

    mutating func appendBody(_ bytes: some Collection<UInt8>) {
        bodyLength += bytes.count
        let room = Self.bodyRetentionLimit - body.count
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
    }

    func header(_ header: APNSRequestHeader) -> String? {
        apnsHeaders[header.rawValue]
    }

    /// Trailers extend the block.
    mutating func addTrailers(_ trailers: HPACKHeaders) {
        for (name, value, _) in trailers { record(name: name, value: value) }
    }

    private mutating func record(name: String, value: String) {
        guard let header = APNSRequestHeader(name: name) else { return }
        if apnsHeaders[header.rawValue] != nil {
            if duplicatedHeader == nil { duplicatedHeader = header }
        } else {
            apnsHeaders[header.rawValue] = value
        }
    }
}

/// The request headers APNs defines, each of which may appear once.
enum APNSRequestHeader: Int, CaseIterable, Sendable {
    case authorization
    case apnsID
    case apnsRequestID
    case apnsPushType
    case apnsTopic
    case apnsPriority
    case apnsExpiration
    case apnsCollapseID
    case apnsChannelID

    var name: String {
        switch self {
        case .authorization: "authorization"
        case .apnsID: "apns-id"
        case .apnsRequestID: "apns-request-id"
        case .apnsPushType: "apns-push-type"
        case .apnsTopic: "apns-topic"
        case .apnsPriority: "apns-priority"
        case .apnsExpiration: "apns-expiration"
        case .apnsCollapseID: "apns-collapse-id"
        case .apnsChannelID: "apns-channel-id"
        }
    }

    /// The header a (lower-case, as HTTP/2 requires) field name stands for.
    init?(name: String) {
        // Every APNs header begins with "a"; most other fields are dismissed by one byte.
        guard name.utf8.first == UInt8(ascii: "a") else { return nil }
        switch name {
        case "authorization": self = .authorization
        case "apns-id": self = .apnsID
        case "apns-request-id": self = .apnsRequestID
        case "apns-push-type": self = .apnsPushType
        case "apns-topic": self = .apnsTopic
        case "apns-priority": self = .apnsPriority
        case "apns-expiration": self = .apnsExpiration
        case "apns-collapse-id": self = .apnsCollapseID
        case "apns-channel-id": self = .apnsChannelID
        default: return nil
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
        idHeader: APNSRequestHeader,
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
            headers: [("content-type", "application/json"), (idHeader.name, id)],
            body: body
        )
    }
}
