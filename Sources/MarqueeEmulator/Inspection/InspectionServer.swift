import Foundation
import MarqueeCore
import NIOCore
import NIOHTTP1
import NIOPosix

/// The JSON inspection API over HTTP/1.1, for tests, demos and people (`curl`):
///
/// | method | path | answer |
/// |---|---|---|
/// | GET | `/v1/summary` | profile, listeners, CA path, counters |
/// | GET, POST | `/v1/{env}/devices` | devices; POST `{"bundleID", "iOSVersion", "pushToStartAttributesTypes"}`
/// registers one |
/// | POST | `/v1/{env}/devices/batch` | registers `count` (at most 10,000) alike: `{"bundleID", "iOSVersion",
/// "pushToStartAttributesTypes", "count"}` |
/// | GET | `/v1/{env}/start-counts` | per device: starts APNs accepted and activities it has had
/// (``DeviceStartCount``) |
/// | GET | `/v1/{env}/devices/{id}` | one device (with `appTraits` when its app is played) |
/// | POST | `/v1/{env}/devices/{id}/launch` | the user opens a played app that knows `{"liveEvents": [...]}` are live:
/// it reports each |
/// | GET | `/v1/apps` | the played apps and their Marquee's base URL (never the key) |
/// | PUT, DELETE | `/v1/apps/{bundleID}/marquee` | plays the app: `{"baseURL", "appKey", "attributesType",
/// "eventKeyAttribute"}`; or stops |
/// | POST | `/v1/{env}/devices/{id}/uninstall` | removes the app (its tokens answer 410) |
/// | POST | `/v1/{env}/devices/{id}/offline`, `.../online` | takes the device offline (APNs holds its pushes) or back |
/// | POST | `/v1/{env}/devices/{id}/live-activities-off`, `.../live-activities-on` | the user turns Live Activities
/// off for the app (starts answer 200, nothing shows) or back on |
/// | GET | `/v1/{env}/activities`, `/v1/{env}/activities/{id}` | Live Activities and their content-state |
/// | GET | `/v1/{env}/update-tokens` | update tokens the apps would report |
/// | GET | `/v1/{env}/channels` | channels, with subscribers |
/// | GET | `/v1/{env}/pushes/{token or channel ID}` | pushes received |
/// | GET | `/v1/rejections` | rejected requests with their reasons |
/// | GET, POST, DELETE | `/v1/faults` | installed faults; POST installs one (``InspectionFaultRequest``); DELETE
/// removes all |
enum InspectionServer {
    static func bind(
        host: String,
        port: Int,
        emulator: APNSEmulator,
        connections: ConnectionRegistry,
        group: any EventLoopGroup
    ) async throws -> any Channel {
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                connections.add(channel, speaksAPNs: false)
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(InspectionHandler(emulator: emulator))
                }
            }
        return try await bootstrap.bind(host: host, port: port).get()
    }
}

/// Answers one inspection request at a time per connection.
final class InspectionHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let emulator: APNSEmulator
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    private var bodyTooLarge = false
    /// Request bodies larger than this are refused (413); the API takes small JSON documents.
    private static let maximumBody = 64 * 1024

    init(emulator: APNSEmulator) {
        self.emulator = emulator
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            body = []
            bodyTooLarge = false
        case .body(let buffer):
            if body.count + buffer.readableBytes <= Self.maximumBody {
                body.append(contentsOf: buffer.readableBytesView)
            } else {
                bodyTooLarge = true
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let (status, json) = route(head, body: bodyTooLarge ? nil : body)
            respond(status: status, json: json, keepAlive: head.isKeepAlive, context: context)
        }
    }

    private func respond(status: HTTPResponseStatus, json: [UInt8], keepAlive: Bool, context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(json.count))
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: json)))), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        if !keepAlive {
            done.futureResult.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        // Compact, as Marquee's own API answers (`jq` is there for reading them).
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }()

    private func encode(_ value: some Encodable) -> (HTTPResponseStatus, [UInt8]) {
        do {
            return (.ok, Array(try Self.encoder.encode(value)))
        } catch {
            return problem(.internalServerError, "could not encode the answer")
        }
    }

    private func problem(_ status: HTTPResponseStatus, _ message: String) -> (HTTPResponseStatus, [UInt8]) {
        let body: JSONValue = ["error": .string(message)]
        return (status, body.jsonBytes)
    }

    private struct DeviceRegistration: Decodable {
        var bundleID: String
        var iOSVersion: IOSVersion?
        var pushToStartAttributesTypes: [String]?
        /// For `devices/batch`: how many devices alike.
        var count: Int?
    }

    private struct AppConnection: Decodable {
        var baseURL: String
        var appKey: String
        var attributesType: String?
        var eventKeyAttribute: String?
    }

    private struct Launch: Decodable {
        var liveEvents: [String]
    }

    /// Most devices one `devices/batch` request registers.
    static let maximumDeviceBatch = 10_000

    private struct Summary: Encodable {
        /// Which answers the emulator gives where Apple's servers and documentation differ.
        var profile: APNSEmulatorProfile
        var listeners: [String: String]
        var inspectionURL: String?
        var caCertificatePath: String?
        var counters: EmulatorCounters
    }

    private func route(_ head: HTTPRequestHead, body: [UInt8]?) -> (HTTPResponseStatus, [UInt8]) {
        guard let body else { return problem(.payloadTooLarge, "request body too large") }
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        let parts = path.split(separator: "/").map(String.init)
        guard parts.first == "v1", parts.count >= 2 else { return problem(.notFound, "unknown path") }
        if let answer = routeEmulator(head.method, Array(parts.dropFirst()), body: body) { return answer }
        guard let environment = APNSEnvironment(rawValue: parts[1]) else { return problem(.notFound, "unknown path") }
        return routeEnvironment(head.method, environment, Array(parts.dropFirst(2)), body: body)
    }

    /// `/v1/summary`, `/v1/rejections`, `/v1/faults` and `/v1/apps`: the emulator as a whole; `nil`
    /// for any other path.
    private func routeEmulator(_ method: HTTPMethod, _ parts: [String], body: [UInt8]) -> (HTTPResponseStatus, [UInt8])?
    {
        switch (method, parts) {
        case (.GET, ["summary"]):
            var listeners: [String: String] = [:]
            for listener in emulator.listeners.keys { listeners[listener.description] = emulator.url(for: listener) }
            return encode(
                Summary(
                    profile: emulator.configuration.profile,
                    listeners: listeners,
                    inspectionURL: emulator.inspectionURL,
                    caCertificatePath: emulator.caCertificatePath,
                    counters: emulator.counters
                )
            )
        case (.GET, ["rejections"]):
            return encode(emulator.rejectedRequests())
        case (.GET, ["faults"]):
            return encode(emulator.faults.map { String(describing: $0) })
        case (.POST, ["faults"]):
            guard let request = try? JSONDecoder().decode(InspectionFaultRequest.self, from: Data(body)),
                let fault = request.fault
            else {
                return problem(
                    .badRequest,
                    "expected a fault: {\"action\": \"respond\"|\"goAway\"|\"reset\"|\"delay\", ...}"
                )
            }
            emulator.injectFault(fault)
            return encode(request)
        case (.DELETE, ["faults"]):
            emulator.removeAllFaults()
            return encode([String]())
        case (.GET, ["apps"]):
            return encode(emulator.connectedAppsShown)
        case (.PUT, let path) where path.count == 3 && path[0] == "apps" && path[2] == "marquee":
            guard let connection = try? JSONDecoder().decode(AppConnection.self, from: Data(body)),
                let url = URL(string: connection.baseURL), url.scheme == "http" || url.scheme == "https",
                !connection.appKey.isEmpty
            else {
                return problem(
                    .badRequest,
                    """
                    expected {\"baseURL\": \"http://...\", \"appKey\": ..., \"attributesType\": ..., \
                    \"eventKeyAttribute\": \"eventKey\"}
                    """
                )
            }
            let marquee = EmulatedAppMarquee(
                baseURL: url,
                appKey: connection.appKey,
                attributesType: connection.attributesType,
                eventKeyAttribute: connection.eventKeyAttribute ?? "eventKey"
            )
            emulator.connectApp(bundleID: path[1], to: marquee)
            return encode(marquee.shown(bundleID: path[1]))
        case (.DELETE, let path) where path.count == 3 && path[0] == "apps" && path[2] == "marquee":
            emulator.disconnectApp(bundleID: path[1])
            return encode(emulator.connectedAppsShown)
        default:
            return nil
        }
    }

    /// `/v1/{environment}/…`: the virtual devices, activities, channels and pushes of one environment.
    private func routeEnvironment(
        _ method: HTTPMethod,
        _ environment: APNSEnvironment,
        _ rest: [String],
        body: [UInt8]
    ) -> (HTTPResponseStatus, [UInt8]) {
        let resource = rest.first ?? ""
        let id = rest.count > 1 ? rest[1] : nil
        switch (method, resource, rest.count) {
        case (.GET, "devices", 1):
            return encode(emulator.devices(in: environment))
        case (.POST, "devices", 1):
            return registerDevice(body, in: environment)
        case (.POST, "devices", 2) where rest[1] == "batch":
            return registerDevices(body, in: environment)
        case (.GET, "start-counts", 1):
            return encode(emulator.startCounts(in: environment))
        case (.GET, "devices", 2):
            guard let id, let device = emulator.device(id: id, in: environment) else {
                return problem(.notFound, "no such device")
            }
            return encode(device)
        case (.POST, "devices", 3):
            guard let id else { return problem(.notFound, "no such device") }
            return deviceAction(rest[2], deviceID: id, environment: environment, body: body)
        case (.GET, "activities", 1):
            return encode(emulator.activities(in: environment))
        case (.GET, "activities", 2):
            guard let id, let activity = emulator.activity(id: id, in: environment) else {
                return problem(.notFound, "no such activity")
            }
            return encode(activity)
        case (.GET, "update-tokens", 1):
            return encode(emulator.reportedUpdateTokens(in: environment))
        case (.GET, "channels", 1):
            return encode(emulator.channels(in: environment))
        case (.GET, "pushes", 2):
            guard let id else { return problem(.notFound, "unknown path") }
            return encode(emulator.pushes(to: id.removingPercentEncoding ?? id, in: environment))
        default:
            return problem(.notFound, "unknown path")
        }
    }

    /// `POST /v1/{environment}/devices`: one virtual device.
    private func registerDevice(_ body: [UInt8], in environment: APNSEnvironment) -> (HTTPResponseStatus, [UInt8]) {
        guard let registration = try? JSONDecoder().decode(DeviceRegistration.self, from: Data(body)) else {
            return problem(
                .badRequest,
                "expected {\"bundleID\": ..., \"iOSVersion\": \"18.0\", \"pushToStartAttributesTypes\": [...]}"
            )
        }
        do {
            let device = try emulator.registerDevice(
                environment: environment,
                bundleID: registration.bundleID,
                iOSVersion: registration.iOSVersion ?? IOSVersion(18, 0),
                pushToStartAttributesTypes: registration.pushToStartAttributesTypes ?? []
            )
            return encode(device)
        } catch {
            return problem(.badRequest, error.description)
        }
    }

    /// `POST /v1/{environment}/devices/batch`: `count` alike virtual devices.
    private func registerDevices(_ body: [UInt8], in environment: APNSEnvironment) -> (HTTPResponseStatus, [UInt8]) {
        guard let registration = try? JSONDecoder().decode(DeviceRegistration.self, from: Data(body)),
            let count = registration.count, (1...Self.maximumDeviceBatch).contains(count)
        else {
            return problem(
                .badRequest,
                """
                expected {\"bundleID\": ..., \"iOSVersion\": \"18.0\", \"pushToStartAttributesTypes\": [...], \
                \"count\": 1...\(Self.maximumDeviceBatch)}
                """
            )
        }
        do {
            return encode(
                try emulator.registerDevices(
                    count: count,
                    environment: environment,
                    bundleID: registration.bundleID,
                    iOSVersion: registration.iOSVersion ?? IOSVersion(18, 0),
                    pushToStartAttributesTypes: registration.pushToStartAttributesTypes ?? []
                )
            )
        } catch {
            return problem(.badRequest, error.description)
        }
    }

    /// `POST /v1/{environment}/devices/{id}/{action}`: what a person does to a device.
    private func deviceAction(
        _ action: String,
        deviceID: String,
        environment: APNSEnvironment,
        body: [UInt8]
    ) -> (HTTPResponseStatus, [UInt8]) {
        switch action {
        case "uninstall":
            return changing(deviceID, in: environment, failing: .notFound) { () throws(EmulatorError) in
                try emulator.uninstallApp(environment: environment, deviceID: deviceID)
            }
        case "offline", "online":
            return changing(deviceID, in: environment, failing: .notFound) { () throws(EmulatorError) in
                try emulator.setDeviceOnline(action == "online", environment: environment, deviceID: deviceID)
            }
        case "live-activities-off", "live-activities-on":
            return changing(deviceID, in: environment, failing: .notFound) { () throws(EmulatorError) in
                let enabled = action == "live-activities-on"
                try emulator.setLiveActivitiesEnabled(enabled, environment: environment, deviceID: deviceID)
            }
        case "launch":
            guard let launch = try? JSONDecoder().decode(Launch.self, from: Data(body)) else {
                return problem(.badRequest, "expected {\"liveEvents\": [\"event-key\", ...]}")
            }
            return changing(deviceID, in: environment, failing: .badRequest) { () throws(EmulatorError) in
                try emulator.launchApp(environment: environment, deviceID: deviceID, liveEvents: launch.liveEvents)
            }
        default:
            return problem(.notFound, "unknown path")
        }
    }

    /// The device after `change`, or the emulator's refusal of it as `status`.
    private func changing(
        _ deviceID: String,
        in environment: APNSEnvironment,
        failing status: HTTPResponseStatus,
        _ change: () throws(EmulatorError) -> Void
    ) -> (HTTPResponseStatus, [UInt8]) {
        do {
            try change()
            return encode(emulator.device(id: deviceID, in: environment))
        } catch {
            return problem(status, error.description)
        }
    }
}
