import Crypto
import Foundation
import Logging
import MarqueeCore
import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// A local APNs: device pushes, broadcasts and channel management over HTTP/2 (TLS and h2c), with
/// Apple's authentication rules, virtual devices whose Live Activities change as pushes arrive,
/// fault injection and an inspection API.
///
/// Start one on port 0 in a test, point a client at ``pushURL(_:transport:)`` and
/// ``channelManagementURL(_:transport:)`` (trusting ``caCertificatePath``), and read what the
/// devices did through the inspection accessors:
///
/// ```swift
/// let emulator = APNSEmulator()
/// try await emulator.start()
/// let key = try emulator.makeDemoKey(bundleID: "com.example.app")
/// let device = try emulator.registerDevice(
///     environment: .sandbox, bundleID: "com.example.app", iOSVersion: "18.0",
///     pushToStartAttributesTypes: ["MatchAttributes"])
/// // ... send pushes signed with key.privateKey to emulator.pushURL(.sandbox) ...
/// let activities = emulator.activities(in: .sandbox)
/// try await emulator.shutdown()
/// ```
///
/// Every listener serves one environment, as Apple's hosts do: tokens, channels and environment-
/// restricted keys of one environment are unknown in the other.
public final class APNSEmulator: Sendable {
    public let configuration: APNSEmulatorConfiguration
    let state: EmulatorState
    /// The played apps' side of their devices: reports to Marquee, on tasks of its own.
    let appModel: EmulatedAppModel
    /// Reaches the subscribers of each broadcast after its answer.
    let courier: BroadcastCourier
    private let runtime = Mutex<Runtime>(Runtime())

    private struct Runtime: Sendable {
        var phase: Phase = .idle
        var serverChannels: [APNSEmulatorListener: any Channel] = [:]
        var ports: [APNSEmulatorListener: Int] = [:]
        var inspectionChannel: (any Channel)?
        var inspectionPort: Int?
        var caCertificatePEM: String?
        var caCertificatePath: String?
        var connections = ConnectionRegistry()

        enum Phase: Sendable { case idle, starting, running, stopped }
    }

    public init(configuration: APNSEmulatorConfiguration = APNSEmulatorConfiguration()) {
        self.configuration = configuration
        self.state = EmulatorState(configuration: configuration)
        self.appModel = EmulatedAppModel(state: state, events: state.appEvents)
        self.courier = BroadcastCourier(state: state)
    }

    // MARK: Lifecycle

    /// Generates (or loads) the certificate, writes the CA file and binds every listener.
    /// Throws ``EmulatorError/alreadyStarted`` when called twice.
    public func start() async throws {
        try runtime.withLock { runtime throws(EmulatorError) in
            guard runtime.phase == .idle else { throw .alreadyStarted }
            runtime.phase = .starting
        }
        do {
            _ = try configuration.appShares.validated()
            try await bindEverything()
            appModel.start()
            courier.start()
        } catch {
            await closeEverything()
            throw error
        }
    }

    /// Starts the emulator unless something already started it (a server that needs its ports for
    /// its own configuration starts it before its service group runs): what `run()` begins with.
    func startUnlessStarted() async throws {
        guard runtime.withLock({ $0.phase == .idle }) else { return }
        try await start()
    }

    /// Closes every listener and connection. Safe to call more than once.
    public func shutdown() async {
        await closeEverything()
    }

    private func bindEverything() async throws {
        let group = configuration.eventLoopGroup ?? MultiThreadedEventLoopGroup.singleton
        var sslContext: NIOSSLContext?
        var caPEM: String?
        switch configuration.tls {
        case .generated:
            let authority = try EmulatorCertificateAuthority.generate()
            sslContext = try EmulatorListenerServer.makeSSLContext(
                certificateChainPEM: authority.leafCertificatePEM,
                privateKeyPEM: authority.leafPrivateKeyPEM
            )
            caPEM = authority.caCertificatePEM
        case .supplied(let chain, let key, let ca):
            sslContext = try EmulatorListenerServer.makeSSLContext(certificateChainPEM: chain, privateKeyPEM: key)
            caPEM = ca
        case .disabled:
            break
        }
        var caPath: String?
        if let caPEM {
            let path = try configuration.caCertificatePath ?? Self.temporaryCAPath()
            try Data(caPEM.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            caPath = path
        }

        var transports: [APNSEmulatorListener.Transport] = []
        if sslContext != nil { transports.append(.tls) }
        if configuration.h2c { transports.append(.h2c) }
        guard !transports.isEmpty else { throw EmulatorError.invalidConfiguration("neither TLS nor h2c listeners") }

        let connections = runtime.withLock { $0.connections }
        var channels: [APNSEmulatorListener: any Channel] = [:]
        var ports: [APNSEmulatorListener: Int] = [:]
        for environment in configuration.environments {
            for kind in APNSEmulatorListener.Kind.allCases {
                for transport in transports {
                    let listener = APNSEmulatorListener(environment: environment, kind: kind, transport: transport)
                    let channel = try await EmulatorListenerServer.bind(
                        listener: listener,
                        host: configuration.host,
                        port: configuration.ports[listener] ?? 0,
                        sslContext: transport == .tls ? sslContext : nil,
                        state: state,
                        connections: connections,
                        group: group
                    )
                    channels[listener] = channel
                    ports[listener] = channel.localAddress?.port
                    runtime.withLock { $0.serverChannels[listener] = channel }
                }
            }
        }
        var inspectionChannel: (any Channel)?
        if configuration.inspection {
            inspectionChannel = try await InspectionServer.bind(
                host: configuration.host,
                port: configuration.inspectionPort,
                emulator: self,
                connections: connections,
                group: group
            )
        }
        runtime.withLock { runtime in
            runtime.serverChannels = channels
            runtime.ports = ports
            runtime.inspectionChannel = inspectionChannel
            runtime.inspectionPort = inspectionChannel?.localAddress?.port
            runtime.caCertificatePEM = caPEM
            runtime.caCertificatePath = caPath
            runtime.phase = .running
        }
    }

    private func closeEverything() async {
        await courier.shutdown()
        await appModel.shutdown()
        let (servers, inspection, connections) = runtime.withLock { runtime in
            let result = (Array(runtime.serverChannels.values), runtime.inspectionChannel, runtime.connections)
            runtime.serverChannels = [:]
            runtime.inspectionChannel = nil
            runtime.phase = .stopped
            return result
        }
        for channel in servers { try? await channel.close() }
        try? await inspection?.close()
        connections.closeAll()
    }

    private static func temporaryCAPath() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-emulator-\(RandomIdentifiers.uuid())"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("ca.pem").path
    }

    // MARK: Where it listens

    /// The bound port of a listener, once started.
    public func port(for listener: APNSEmulatorListener) -> Int? {
        runtime.withLock { $0.ports[listener] }
    }

    /// Every bound listener and its port.
    public var listeners: [APNSEmulatorListener: Int] {
        runtime.withLock { $0.ports }
    }

    /// `https://127.0.0.1:<port>` (or `http://` for h2c) of the device-push and broadcast listener.
    public func pushURL(_ environment: APNSEnvironment, transport: APNSEmulatorListener.Transport = .tls) -> String? {
        url(for: APNSEmulatorListener(environment: environment, kind: .push, transport: transport))
    }

    /// The base URL of the channel-management listener.
    public func channelManagementURL(
        _ environment: APNSEnvironment,
        transport: APNSEmulatorListener.Transport = .tls
    ) -> String? {
        url(for: APNSEmulatorListener(environment: environment, kind: .channelManagement, transport: transport))
    }

    /// The base URL of a listener, once started.
    public func url(for listener: APNSEmulatorListener) -> String? {
        guard let port = port(for: listener) else { return nil }
        let scheme = listener.transport == .tls ? "https" : "http"
        return "\(scheme)://\(Self.urlHost(configuration.host)):\(port)"
    }

    /// The base URL of the JSON inspection API, once started.
    public var inspectionURL: String? {
        runtime.withLock { $0.inspectionPort }.map { "http://\(Self.urlHost(configuration.host)):\($0)" }
    }

    /// The PEM of the CA that issued the TLS listeners' certificate.
    public var caCertificatePEM: String? { runtime.withLock { $0.caCertificatePEM } }

    /// The file holding ``caCertificatePEM``, for clients such as `curl --cacert`.
    public var caCertificatePath: String? { runtime.withLock { $0.caCertificatePath } }

    private static func urlHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    // MARK: Keys and apps

    /// Accepts provider tokens signed by this key (looked up by key ID, checked against the team).
    public func registerKey(_ key: APNSEmulatorSigningKey) {
        state.withWorld { $0.keys[key.keyID] = key }
    }

    /// Accepts provider tokens signed by `publicKey` for `teamID` and `keyID`.
    public func registerKey(
        teamID: String,
        keyID: String,
        publicKey: P256.Signing.PublicKey,
        environments: Set<APNSEnvironment> = Set(APNSEnvironment.allCases)
    ) {
        registerKey(
            APNSEmulatorSigningKey(teamID: teamID, keyID: keyID, publicKey: publicKey, environments: environments)
        )
    }

    /// Registers an app under a team. `broadcastEnabled: false` makes broadcast and channel
    /// requests for it answer `FeatureNotEnabled`. Registering the same app for the same team
    /// again updates it; another team's app throws.
    public func registerApp(bundleID: String, teamID: String, broadcastEnabled: Bool = true) throws(EmulatorError) {
        try state.withWorld { world throws(EmulatorError) in
            if let existing = world.apps[bundleID], existing.teamID != teamID {
                throw .appAlreadyRegistered(bundleID: bundleID, teamID: existing.teamID)
            }
            world.apps[bundleID] = AppRegistration(teamID: teamID, broadcastEnabled: broadcastEnabled)
        }
    }

    /// The demo key's team and app unless told otherwise.
    public static let defaultDemoTeamID = "EMUTEAM001"
    public static let defaultDemoBundleID = "com.example.marquee"

    /// Makes a fresh P-256 key, registers it and the app for `teamID`, and returns it for clients.
    /// Without a `keyID` a random 10-character one is chosen.
    public func makeDemoKey(
        teamID: String = APNSEmulator.defaultDemoTeamID,
        keyID: String? = nil,
        bundleID: String = APNSEmulator.defaultDemoBundleID,
        environments: Set<APNSEnvironment> = Set(APNSEnvironment.allCases)
    ) throws(EmulatorError) -> APNSEmulatorDemoKey {
        let privateKey = P256.Signing.PrivateKey()
        let keyID = keyID ?? RandomIdentifiers.token(byteCount: 5).uppercased()
        try registerApp(bundleID: bundleID, teamID: teamID)
        registerKey(teamID: teamID, keyID: keyID, publicKey: privateKey.publicKey, environments: environments)
        return APNSEmulatorDemoKey(teamID: teamID, keyID: keyID, bundleID: bundleID, privateKey: privateKey)
    }

    // MARK: Devices

    /// Registers a virtual device with the app installed, an ordinary device token and one
    /// push-to-start token per `attributes-type` (which needs iOS 17.2 or later).
    public func registerDevice(
        environment: APNSEnvironment,
        bundleID: String,
        iOSVersion: IOSVersion = IOSVersion(18, 0),
        pushToStartAttributesTypes: [String] = []
    ) throws(EmulatorError) -> EmulatedDevice {
        if !pushToStartAttributesTypes.isEmpty, iOSVersion < IOSVersion.pushToStart {
            throw .pushToStartNeedsIOS17_2(iOSVersion)
        }
        let shares = configuration.appShares
        return try state.withWorld { world throws(EmulatorError) in
            guard world.apps[bundleID] != nil else { throw .unknownApp(bundleID: bundleID) }
            let device = world.withEnvironment(environment) { env in
                env.registerDevice(
                    environment: environment,
                    bundleID: bundleID,
                    iOSVersion: iOSVersion,
                    pushToStartAttributesTypes: pushToStartAttributesTypes
                )
            }
            return world.assignAppTraits(to: device, shares: shares)
        }
    }

    /// Registers `count` devices alike (see
    /// ``registerDevice(environment:bundleID:iOSVersion:pushToStartAttributesTypes:)``)
    /// under one lock: a fan-out's audience of thousands in one call.
    public func registerDevices(
        count: Int,
        environment: APNSEnvironment,
        bundleID: String,
        iOSVersion: IOSVersion = IOSVersion(18, 0),
        pushToStartAttributesTypes: [String] = []
    ) throws(EmulatorError) -> [EmulatedDevice] {
        if !pushToStartAttributesTypes.isEmpty, iOSVersion < IOSVersion.pushToStart {
            throw .pushToStartNeedsIOS17_2(iOSVersion)
        }
        let shares = configuration.appShares
        return try state.withWorld { world throws(EmulatorError) in
            guard world.apps[bundleID] != nil else { throw .unknownApp(bundleID: bundleID) }
            let devices = world.withEnvironment(environment) { env in
                (0..<max(0, count)).map { _ in
                    env.registerDevice(
                        environment: environment,
                        bundleID: bundleID,
                        iOSVersion: iOSVersion,
                        pushToStartAttributesTypes: pushToStartAttributesTypes
                    )
                }
            }
            return devices.map { world.assignAppTraits(to: $0, shares: shares) }
        }
    }

    /// Gives the device a new push-to-start token for `attributesType`; the old one answers 410.
    public func rotatePushToStartToken(
        environment: APNSEnvironment,
        deviceID: String,
        attributesType: String
    ) throws(EmulatorError) -> String {
        let now = state.now
        return try state.withWorld { world throws(EmulatorError) in
            try world.withEnvironment(environment) { env throws(EmulatorError) in
                try env.rotatePushToStartToken(deviceID: deviceID, attributesType: attributesType, now: now)
            }
        }
    }

    /// Removes the app from the device: its tokens answer 410 `Unregistered` from now on.
    public func uninstallApp(environment: APNSEnvironment, deviceID: String) throws(EmulatorError) {
        let now = state.now
        try state.withWorld { world throws(EmulatorError) in
            try world.withEnvironment(environment) { env throws(EmulatorError) in
                try env.uninstallApp(deviceID: deviceID, now: now)
            }
        }
    }

    /// Takes the device offline or brings it back. Offline, APNs still accepts its pushes but holds
    /// the newest one that asked to be kept (`apns-expiration` not 0), and its activities miss
    /// broadcasts; back online, it gets the held push and its channels' stored messages that have
    /// not expired. ``pushes(to:in:)`` tells what became of each.
    public func setDeviceOnline(_ online: Bool, environment: APNSEnvironment, deviceID: String) throws(EmulatorError) {
        let now = state.now
        let configuration = configuration
        let appEvent = try state.withWorld { world throws(EmulatorError) -> AppModelEvent? in
            let before = world.environments[environment]?.devices[deviceID]
            try world.withEnvironment(environment) { env throws(EmulatorError) in
                try env.setOnline(
                    online,
                    deviceID: deviceID,
                    now: now,
                    environment: environment,
                    configuration: configuration
                )
            }
            // Back online, the push APNs held reaches the device, and its app if it is played.
            guard online, before?.device.isOnline == false, let held = before?.heldPush, held.expiresAt > now,
                let target = held.target
            else {
                return nil
            }
            return world.appEvent(for: target, payload: held.payload?.bytes, environment: environment)
        }
        if let appEvent { state.appEventSink.yield(appEvent) }
    }

    /// Turns Live Activities off for the device's app, as its user can, or back on: off, APNs
    /// accepts starts (200) and nothing shows.
    public func setLiveActivitiesEnabled(
        _ enabled: Bool,
        environment: APNSEnvironment,
        deviceID: String
    ) throws(EmulatorError) {
        try state.withWorld { world throws(EmulatorError) in
            try world.withEnvironment(environment) { env throws(EmulatorError) in
                try env.setLiveActivitiesEnabled(enabled, deviceID: deviceID)
            }
        }
    }

    // MARK: Played apps

    /// Plays the app `bundleID`: its devices registered from now on draw their traits
    /// (``APNSEmulatorConfiguration/appShares``) and report to `marquee` as MarqueeKit would.
    /// Connecting it again moves it to another Marquee.
    public func connectApp(bundleID: String, to marquee: EmulatedAppMarquee) {
        state.withWorld { $0.appMarquees[bundleID] = marquee }
        configuration.logger.debug(
            "app connected",
            metadata: ["emulator.bundleID": "\(bundleID)", "emulator.marquee": "\(marquee.baseURL.absoluteString)"]
        )
    }

    /// Stops playing the app: its devices report nothing more.
    public func disconnectApp(bundleID: String) {
        state.withWorld { $0.appMarquees[bundleID] = nil }
    }

    /// The played apps and where their Marquee is (the key left out), by bundle ID.
    public var connectedApps: [String: URL] {
        state.withWorld { $0.appMarquees.mapValues(\.baseURL) }
    }

    var connectedAppsShown: [EmulatedAppMarquee.Shown] {
        state.withWorld { world in world.appMarquees.map { $0.value.shown(bundleID: $0.key) } }.sorted {
            $0.bundleID < $1.bundleID
        }
    }

    /// The user opens the app on the device, which knows `liveEvents` are live: it reports, for
    /// each, what its Lock Screen shows (`absent` for one with no activity). Throws when the
    /// device is unknown or its app is not played (or never reports: then it does nothing).
    public func launchApp(environment: APNSEnvironment, deviceID: String, liveEvents: [String]) throws(EmulatorError) {
        let played = try state.withWorld { world throws(EmulatorError) -> Bool in
            guard let device = world.environments[environment]?.devices[deviceID]?.device, device.isAppInstalled else {
                throw .unknownDevice(id: deviceID)
            }
            guard world.appMarquees[device.bundleID] != nil, device.appTraits != nil else {
                throw .appNotPlayed(bundleID: device.bundleID)
            }
            return device.appTraits?.neverReports == false
        }
        if played {
            state.appEventSink.yield(
                AppModelEvent(environment: environment, deviceID: deviceID, kind: .launched(liveEvents: liveEvents))
            )
        }
    }

    /// Wakes of played apps scheduled and not yet run (a report waiting for its delay).
    public var pendingAppWakes: Int {
        get async { await appModel.pendingWakes }
    }

    /// Wakes of played apps run to the end (their reports sent, or failed and left to the next).
    public var appWakesPlayed: Int {
        get async { await appModel.wakesPlayed }
    }

    /// Presence reports played apps gave up (MarqueeKit's retry policy said no more), in order:
    /// the devices whose state Marquee's funnel may lack until their app runs again.
    public var appReportsGivenUp: [EmulatedAppReportGivenUp] {
        get async { await appModel.reportsGivenUp }
    }

    /// The state (`showing`, `absent`, …) the device's played app last reported for the event and
    /// Marquee took; `nil` when none was.
    public func appLastReportedState(
        environment: APNSEnvironment,
        deviceID: String,
        eventKey: String
    ) async -> String? {
        await appModel.lastReportedState(environment: environment, deviceID: deviceID, eventKey: eventKey)
    }

    // MARK: Inspection

    /// Devices of one environment, in registration order is not kept: sorted by ID.
    public func devices(in environment: APNSEnvironment) -> [EmulatedDevice] {
        state.withWorld { world in
            (world.environments[environment]?.devices.values.map(\.device) ?? []).sorted { $0.id < $1.id }
        }
    }

    /// Every device of one environment with the starts APNs accepted for it and the activities it
    /// has had, sorted by device ID: a fan-out counted at the devices.
    public func startCounts(in environment: APNSEnvironment) -> [DeviceStartCount] {
        state.withWorld { world -> [DeviceStartCount] in
            guard let env = world.environments[environment] else { return [] }
            return env.devices.values.map { state in
                DeviceStartCount(
                    deviceID: state.device.id,
                    iOSVersion: state.device.iOSVersion,
                    pushToStartTokens: state.device.pushToStartTokens,
                    startsAccepted: state.startsAccepted,
                    activities: state.device.activityIDs.count
                )
            }
        }
        .sorted { $0.deviceID < $1.deviceID }
    }

    public func device(id: String, in environment: APNSEnvironment) -> EmulatedDevice? {
        state.withWorld { $0.environments[environment]?.devices[id]?.device }
    }

    /// Live Activities of one environment as their devices show them now, oldest first.
    public func activities(in environment: APNSEnvironment) -> [EmulatedActivity] {
        let now = state.now
        let configuration = configuration
        return state.withWorld { world in
            (world.environments[environment]?.activities.values.map(\.activity) ?? [])
        }
        .map { activity in
            var settled = activity
            settled.settle(now: now, configuration: configuration)
            return settled
        }
        .sorted { ($0.startedAt, $0.id) < ($1.startedAt, $1.id) }
    }

    public func activity(id: String, in environment: APNSEnvironment) -> EmulatedActivity? {
        let now = state.now
        guard var activity = state.withWorld({ $0.environments[environment]?.activities[id]?.activity }) else {
            return nil
        }
        activity.settle(now: now, configuration: configuration)
        return activity
    }

    /// The update tokens the apps would report to their backends, oldest first.
    public func reportedUpdateTokens(in environment: APNSEnvironment) -> [ReportedUpdateToken] {
        state.withWorld { $0.environments[environment]?.reportedUpdateTokens() ?? [] }
    }

    /// Channels of one environment, deleted ones included, oldest first.
    public func channels(in environment: APNSEnvironment) -> [EmulatedChannel] {
        state.withWorld { world in
            (world.environments[environment]?.channels.values.map(\.channel) ?? [])
        }
        .sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    /// The pushes accepted for a device token or channel ID (the most recent
    /// ``APNSEmulatorConfiguration/historyPerTarget``), oldest first.
    public func pushes(to target: String, in environment: APNSEnvironment) -> [ReceivedPush] {
        // Device tokens are kept in lower case (paths may carry upper-case hex); channel IDs as issued.
        let history = state.withWorld { $0.environments[environment]?.history }
        return (history?[target] ?? history?[target.lowercased()])?.elements ?? []
    }

    /// Every request answered with an error (the most recent ones), oldest first.
    public func rejectedRequests() -> [RejectedRequest] {
        state.withWorld { $0.rejections.elements }
    }

    /// Request counters, kept whatever the history limits.
    public var counters: EmulatorCounters {
        state.withWorld { $0.counters }
    }

    // MARK: Faults

    /// Installs a fault. GOAWAY faults apply to connections opened afterwards.
    public func injectFault(_ fault: APNSEmulatorFault) {
        state.install(fault)
        configuration.logger.debug("fault injected", metadata: ["emulator.fault": "\(fault)"])
    }

    public func removeAllFaults() {
        state.removeAllFaults()
        configuration.logger.debug("faults removed")
    }

    public var faults: [APNSEmulatorFault] { state.faults }
}
