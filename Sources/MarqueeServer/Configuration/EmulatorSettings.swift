import Configuration
import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator

/// Everything `marquee emulator` is configured by, read the way `marquee serve` reads its keys
/// (`ConfigurationSources`): a flag, the environment (`emulator.host` → `MARQUEE_EMULATOR_HOST`)
/// or a JSON file. docs/configuration.md lists the keys with their defaults.
public struct EmulatorSettings: Sendable {
    /// The emulator as configured, its logger left to the caller.
    public var emulator: APNSEmulatorConfiguration
    /// The demo key the emulator makes and accepts: its team, key ID (random when `nil`) and bundle.
    public var demoTeamID: String
    public var demoKeyID: String?
    public var demoBundleID: String
    /// Where `emulator.json`, `ca.pem` and the demo key's `.p8` are written.
    public var stateDirectory: String?
    /// Faults injected from the start, as the inspection API's `POST /v1/faults` takes them.
    public var faults: [APNSEmulatorFault]
    public var logLevel: Logger.Level

    /// The keys read as secrets wherever they are set.
    static let secretKeys: Set<String> = ["emulator.appKey"]

    /// Flags over the environment (`MARQUEE_…`) over a JSON file over defaults.
    public static func load(flags: [String: String], file: String?) async throws -> EmulatorSettings {
        try EmulatorSettings(
            reader: try await ConfigurationSources.reader(flags: flags, file: file, secretKeys: secretKeys)
        )
    }

    /// The settings of a given set of values, over the environment unless `environment` is false.
    public static func reading(
        _ values: [String: String],
        environment: Bool = true
    ) throws(ConfigurationError) -> EmulatorSettings {
        try EmulatorSettings(
            reader: ConfigurationSources.reader(values: values, environment: environment, secretKeys: secretKeys)
        )
    }

    public init(reader: ConfigReader) throws(ConfigurationError) {
        let profile = try reader.parsed("emulator.profile", default: .observed, expected: "observed or documented") {
            APNSEmulatorProfile(rawValue: $0)
        }
        var emulator = APNSEmulatorConfiguration(profile: profile)
        try Self.readListeners(reader, into: &emulator)
        try Self.readBudgets(reader, into: &emulator)
        emulator.historyPerTarget = try reader.integer("emulator.history", default: 50, range: 0...1_000_000)
        demoTeamID = reader.raw("emulator.teamID") ?? APNSEmulator.defaultDemoTeamID
        demoKeyID = reader.raw("emulator.keyID")
        demoBundleID = reader.raw("emulator.bundleID") ?? APNSEmulator.defaultDemoBundleID
        emulator.appShares = try Self.appShares(reader)
        if let app = try Self.playedApp(reader) { emulator.apps[demoBundleID] = app }
        stateDirectory = reader.raw("emulator.stateDir")
        faults = try Self.faults(reader)
        logLevel = try reader.parsed(
            "emulator.logLevel",
            default: .info,
            expected: "trace, debug, info, notice, warning, error or critical"
        ) {
            Logger.Level(rawValue: $0.lowercased())
        }
        self.emulator = emulator
    }
}

extension EmulatorSettings {
    /// Where it listens: `emulator.host`, `emulator.ports`, `emulator.inspectionPort`, `emulator.tls`,
    /// `emulator.h2c`, `emulator.maxConcurrentStreams`, `emulator.idleTimeoutSeconds`.
    static func readListeners(
        _ reader: ConfigReader,
        into emulator: inout APNSEmulatorConfiguration
    ) throws(ConfigurationError) {
        emulator.host = reader.raw("emulator.host") ?? "127.0.0.1"
        emulator.ports = try listenerPorts(reader.raw("emulator.ports") ?? "")
        emulator.inspectionPort = try reader.integer("emulator.inspectionPort", default: 0, range: 0...65535)
        emulator.tls = try reader.flag("emulator.tls", default: true) ? .generated : .disabled
        emulator.h2c = try reader.flag("emulator.h2c", default: true)
        emulator.maxConcurrentStreams = try reader.integer(
            "emulator.maxConcurrentStreams",
            default: 1000,
            range: 1...1_000_000
        )
        let idleTimeout = try reader.seconds("emulator.idleTimeoutSeconds", default: 0)
        emulator.idleTimeout = idleTimeout > 0 ? .milliseconds(Int64(idleTimeout * 1000)) : nil
    }

    /// Apple's limits as the emulator plays them; 0 is unlimited for each: `emulator.pushToStartBudget`,
    /// `emulator.priorityBudget`, `emulator.broadcastBudgetNoStorage`, `emulator.broadcastBudgetStored`,
    /// `emulator.channelManagementBudget`, `emulator.broadcastThrottleSeconds`.
    static func readBudgets(
        _ reader: ConfigReader,
        into emulator: inout APNSEmulatorConfiguration
    ) throws(ConfigurationError) {
        let pushToStart = try reader.integer("emulator.pushToStartBudget", default: 10, range: 0...1_000_000)
        emulator.pushToStartBudget = pushToStart > 0 ? pushToStart : nil
        let priorityTen = try reader.integer("emulator.priorityBudget", default: 40, range: 0...1_000_000)
        emulator.priorityTenBudgetPerHour = priorityTen > 0 ? priorityTen : nil
        let noStorage = try reader.integer("emulator.broadcastBudgetNoStorage", default: 0, range: 0...100_000_000)
        if noStorage > 0 { emulator.broadcastBudgetPerHour[.noMessageStored] = noStorage }
        let stored = try reader.integer("emulator.broadcastBudgetStored", default: 0, range: 0...100_000_000)
        if stored > 0 { emulator.broadcastBudgetPerHour[.mostRecentMessageStored] = stored }
        let management = try reader.integer("emulator.channelManagementBudget", default: 0, range: 0...100_000_000)
        emulator.channelManagementBudgetPerHour = management > 0 ? management : nil
        let throttle = try reader.seconds("emulator.broadcastThrottleSeconds", default: 0)
        emulator.broadcastThrottle = throttle > 0 ? APNSEmulatorBroadcastThrottle(interval: throttle) : nil
    }

    /// How the played app's devices behave: `emulator.neverReportShare`, `emulator.offlineShare`,
    /// `emulator.liveActivitiesOffShare`, `emulator.answerShare`, `emulator.wakeWithinSeconds`,
    /// `emulator.reportDelaySeconds`, `emulator.seed`.
    static func appShares(_ reader: ConfigReader) throws(ConfigurationError) -> EmulatedAppShares {
        var shares = EmulatedAppShares()
        shares.neverReports = try share(reader, "emulator.neverReportShare", default: 0)
        shares.offlineAtRegistration = try share(reader, "emulator.offlineShare", default: 0)
        shares.liveActivitiesOff = try share(reader, "emulator.liveActivitiesOffShare", default: 0)
        shares.answersBackgroundPush = try share(reader, "emulator.answerShare", default: 1)
        shares.wakeWithin = .milliseconds(Int64(try reader.seconds("emulator.wakeWithinSeconds", default: 10) * 1000))
        shares.reportDelay = .milliseconds(Int64(try reader.seconds("emulator.reportDelaySeconds", default: 2) * 1000))
        shares.seed = try reader.parsed("emulator.seed", default: 1, expected: "a whole number of 0 or more") {
            UInt64($0)
        }
        return shares
    }

    static func share(
        _ reader: ConfigReader,
        _ key: String,
        default defaultValue: Double
    ) throws(ConfigurationError) -> Double {
        try reader.parsed(key, default: defaultValue, expected: "a share from 0 to 1") {
            Double($0).flatMap { (0...1).contains($0) ? $0 : nil }
        }
    }

    /// The demo app played against a Marquee: `emulator.marqueeURL` with the app-role key
    /// `emulator.appKey` (a secret: `MARQUEE_EMULATOR_APP_KEY`, never a flag, so `ps` never shows
    /// it), `emulator.attributesType`, `emulator.eventKeyAttribute`.
    static func playedApp(_ reader: ConfigReader) throws(ConfigurationError) -> EmulatedAppMarquee? {
        guard let text = reader.raw("emulator.marqueeURL") else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError(
                key: "emulator.marqueeURL",
                "'\(text)' is not an http(s) URL, e.g. http://127.0.0.1:8080"
            )
        }
        guard let key = reader.raw("emulator.appKey", isSecret: true), !key.isEmpty else {
            throw ConfigurationError(
                key: "emulator.appKey",
                "is required with emulator.marqueeURL: set MARQUEE_EMULATOR_APP_KEY to the app-role API key"
            )
        }
        return EmulatedAppMarquee(
            baseURL: url,
            appKey: key,
            attributesType: reader.raw("emulator.attributesType"),
            eventKeyAttribute: reader.raw("emulator.eventKeyAttribute") ?? "eventKey"
        )
    }

    /// `emulator.ports`: `LISTENER=PORT` pairs separated by commas, LISTENER being
    /// ENV-KIND-TRANSPORT (`sandbox-push-h2c=8080`).
    static func listenerPorts(_ text: String) throws(ConfigurationError) -> [APNSEmulatorListener: Int] {
        var ports: [APNSEmulatorListener: Int] = [:]
        for specification in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let parts = specification.split(separator: "=")
            let names = parts.first?.split(separator: "-") ?? []
            guard parts.count == 2, names.count == 3,
                let environment = APNSEnvironment(rawValue: String(names[0])),
                let kind = APNSEmulatorListener.Kind(rawValue: String(names[1])),
                let transport = APNSEmulatorListener.Transport(rawValue: String(names[2])),
                let port = Int(parts[1]), (0...65535).contains(port)
            else {
                throw ConfigurationError(
                    key: "emulator.ports",
                    "'\(specification)' is not ENV-KIND-TRANSPORT=PORT, e.g. sandbox-push-tls=2197"
                )
            }
            ports[APNSEmulatorListener(environment: environment, kind: kind, transport: transport)] = port
        }
        return ports
    }

    /// `emulator.faults`: a JSON array of faults as the inspection API's `POST /v1/faults` takes
    /// them, e.g. `[{"action":"respond","reason":"TooManyRequests","probability":0.1}]`.
    static func faults(_ reader: ConfigReader) throws(ConfigurationError) -> [APNSEmulatorFault] {
        guard let text = reader.raw("emulator.faults") else { return [] }
        let example = #"[{"action":"respond","reason":"ServiceUnavailable","every":3}]"#
        guard let requests = try? JSONDecoder().decode([InspectionFaultRequest].self, from: Data(text.utf8)) else {
            throw ConfigurationError(key: "emulator.faults", "'\(text)' is not a JSON array of faults, e.g. \(example)")
        }
        return try requests.map { request throws(ConfigurationError) in
            guard let fault = request.fault else {
                throw ConfigurationError(
                    key: "emulator.faults",
                    "'\(text)' holds a fault that is not one, e.g. \(example)"
                )
            }
            return fault
        }
    }
}
