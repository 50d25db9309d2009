import ArgumentParser
import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator
import ServiceLifecycle
import UnixSignals

/// `marquee emulator`: a local APNs for demos, app developers and benchmarks.
struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Runs a local APNs: device pushes, broadcasts and channel management with virtual devices.",
        discussion: """
            Listens on 127.0.0.1 with HTTP/2 over TLS (a CA generated at start) and h2c, \
            one push and one channel-management listener per environment, plus a JSON inspection API. \
            With --state-dir it writes DIR/emulator.json (URLs, CA path, a demo key it accepts) \
            and the demo key's .p8. Runs until SIGINT or SIGTERM.
            """
    )

    @Option(help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(
        help: ArgumentHelp(
            "Answer as Apple's servers were seen answering (observed) or as Apple's documentation says (documented).",
            valueName: "observed|documented"
        )
    )
    var profile: APNSEmulatorProfile = .observed

    @Option(
        name: .customLong("port"),
        help: ArgumentHelp(
            "A fixed port for one listener, as LISTENER=PORT (repeatable). LISTENER is ENV-KIND-TRANSPORT: sandbox|production, push|channelManagement, tls|h2c; e.g. sandbox-push-h2c=8080.",
            valueName: "listener=port"
        )
    )
    var ports: [String] = []

    @Option(help: "Port of the JSON inspection API (0: any free port).")
    var inspectionPort = 0

    @Flag(inversion: .prefixedNo, help: "Serve HTTP/2 over TLS.")
    var tls = true

    @Flag(inversion: .prefixedNo, help: "Serve cleartext HTTP/2 (h2c, prior knowledge).")
    var h2c = true

    @Option(help: "Directory for emulator.json, ca.pem and the demo key's .p8.")
    var stateDir: String?

    @Option(help: "SETTINGS_MAX_CONCURRENT_STREAMS once a provider token was accepted.")
    var maxConcurrentStreams = 1000

    @Option(help: "Team ID of the demo key.")
    var teamID = "EMUTEAM001"

    @Option(help: "Key ID of the demo key (random when absent).")
    var keyID: String?

    @Option(help: "Bundle ID of the demo app.")
    var bundleID = "com.example.marquee"

    @Option(help: "Starts a device accepts per hour (0: unlimited).")
    var pushToStartBudget = 10

    @Option(help: "Priority-10 updates per activity per hour (0: unlimited).")
    var priorityBudget = 40

    @Option(help: "Pushes kept per token or channel for inspection.")
    var history = 50

    @Option(help: "Close connections silent this many seconds with GOAWAY IdleTimeout (0: never).")
    var idleTimeout = 0.0

    @Option(help: "Broadcasts per hour a No-Message-Stored channel may publish before 429 TooManyRequests (0: unlimited).")
    var broadcastBudgetNoStorage = 0

    @Option(help: "Broadcasts per hour a Most-Recent-Message-Stored channel may publish before 429 TooManyRequests (0: unlimited).")
    var broadcastBudgetStored = 0

    @Option(help: "Channel-management requests per app and hour before 429 TooManyRequests (0: unlimited).")
    var channelManagementBudget = 0

    @Option(help: "Seconds between broadcasts on one channel before 429 TooManyRequests; Apple speaks of about 1 (0: no throttling).")
    var broadcastThrottle = 0.0

    @Option(
        help: ArgumentHelp(
            "Play the demo app against this Marquee: its devices report presence there as MarqueeKit would, with the app-role key in the environment variable MARQUEE_EMULATOR_APP_KEY (kept off the command line).",
            valueName: "url"
        )
    )
    var marqueeURL: String?

    @Option(help: "The played app's attributes-type whose push-to-start token the reports name (default: the device's first).")
    var attributesType: String?

    @Option(help: "The member of a start's attributes that holds the event key.")
    var eventKeyAttribute = "eventKey"

    @Option(help: "Share (0–1) of the played app's devices that never report.")
    var neverReportShare = 0.0

    @Option(help: "Share (0–1) of the played app's devices offline at registration (APNs holds their newest push).")
    var offlineShare = 0.0

    @Option(help: "Share (0–1) of the played app's devices with Live Activities turned off (starts answer 200, nothing shows).")
    var liveActivitiesOffShare = 0.0

    @Option(help: "Share (0–1) of the played app's devices that wake for Marquee's background push; the rest never do.")
    var answerShare = 1.0

    @Option(help: "Seconds within which an answering device wakes for a background push (drawn evenly per device).")
    var wakeWithin = 10.0

    @Option(help: "Seconds after a start or an end before the app reports what it shows.")
    var reportDelay = 2.0

    @Option(help: "Seed of the per-device draws: the same seed and registrations give the same devices.")
    var seed: UInt64 = 1

    @Option(
        name: .customLong("fault"),
        help: ArgumentHelp(
            #"A fault to inject from the start, as the inspection API's POST /v1/faults takes it (repeatable), e.g. '{"action":"respond","reason":"TooManyRequests","probability":0.1}'."#,
            valueName: "json"
        )
    )
    var faults: [String] = []

    @Option(help: "Log level on standard error: trace, debug (every rejected request), info, notice, warning, error, critical.")
    var logLevel: Logger.Level = .info

    func validate() throws {
        _ = try parsedFaults()
        guard idleTimeout >= 0 else { throw ValidationError("--idle-timeout must not be negative") }
        guard broadcastThrottle >= 0 else { throw ValidationError("--broadcast-throttle must not be negative (0 means none)") }
        for (name, share) in [
            ("--never-report-share", neverReportShare), ("--offline-share", offlineShare),
            ("--live-activities-off-share", liveActivitiesOffShare), ("--answer-share", answerShare),
        ] where !(0...1).contains(share) {
            throw ValidationError("\(name) must be between 0 and 1")
        }
        guard wakeWithin >= 0, reportDelay >= 0 else { throw ValidationError("--wake-within and --report-delay must not be negative") }
        if let marqueeURL {
            guard let url = URL(string: marqueeURL), url.scheme == "http" || url.scheme == "https" else {
                throw ValidationError("--marquee-url \(marqueeURL): expected an http(s) URL, e.g. http://127.0.0.1:8080")
            }
            guard let key = ProcessInfo.processInfo.environment[Self.appKeyVariable], !key.isEmpty else {
                throw ValidationError("--marquee-url needs the app-role API key in \(Self.appKeyVariable)")
            }
        }
        guard broadcastBudgetNoStorage >= 0, broadcastBudgetStored >= 0, channelManagementBudget >= 0 else {
            throw ValidationError("budgets must not be negative (0 means unlimited)")
        }
    }

    /// Where the played app's key comes from: an environment variable, so that `ps` never shows it.
    static let appKeyVariable = "MARQUEE_EMULATOR_APP_KEY"

    private var appShares: EmulatedAppShares {
        var shares = EmulatedAppShares()
        shares.neverReports = neverReportShare
        shares.offlineAtRegistration = offlineShare
        shares.liveActivitiesOff = liveActivitiesOffShare
        shares.answersBackgroundPush = answerShare
        shares.wakeWithin = .milliseconds(Int64(wakeWithin * 1000))
        shares.reportDelay = .milliseconds(Int64(reportDelay * 1000))
        shares.seed = seed
        return shares
    }

    private func parsedFaults() throws -> [APNSEmulatorFault] {
        try faults.map { text in
            guard let request = try? JSONDecoder().decode(InspectionFaultRequest.self, from: Data(text.utf8)),
                let fault = request.fault
            else {
                throw ValidationError(#"--fault \#(text): expected a fault as JSON, e.g. {"action":"respond","reason":"ServiceUnavailable","every":3}"#)
            }
            return fault
        }
    }

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = APNSEmulatorConfiguration(profile: profile)
        configuration.logger = Logger(label: "marquee.emulator")
        configuration.idleTimeout = idleTimeout > 0 ? .milliseconds(Int64(idleTimeout * 1000)) : nil
        if broadcastBudgetNoStorage > 0 { configuration.broadcastBudgetPerHour[.noMessageStored] = broadcastBudgetNoStorage }
        if broadcastBudgetStored > 0 { configuration.broadcastBudgetPerHour[.mostRecentMessageStored] = broadcastBudgetStored }
        configuration.channelManagementBudgetPerHour = channelManagementBudget > 0 ? channelManagementBudget : nil
        configuration.broadcastThrottle = broadcastThrottle > 0 ? APNSEmulatorBroadcastThrottle(interval: broadcastThrottle) : nil
        configuration.host = host
        configuration.h2c = h2c
        configuration.tls = tls ? .generated : .disabled
        configuration.inspectionPort = inspectionPort
        configuration.maxConcurrentStreams = maxConcurrentStreams
        configuration.pushToStartBudget = pushToStartBudget > 0 ? pushToStartBudget : nil
        configuration.priorityTenBudgetPerHour = priorityBudget > 0 ? priorityBudget : nil
        configuration.historyPerTarget = history
        configuration.ports = try Self.parsePorts(ports)
        configuration.appShares = appShares
        if let marqueeURL, let url = URL(string: marqueeURL), let key = ProcessInfo.processInfo.environment[Self.appKeyVariable] {
            configuration.apps[bundleID] = EmulatedAppMarquee(
                baseURL: url,
                appKey: key,
                attributesType: attributesType,
                eventKeyAttribute: eventKeyAttribute
            )
        }
        if let stateDir {
            let directory = URL(fileURLWithPath: stateDir)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            configuration.caCertificatePath = directory.appendingPathComponent("ca.pem").path
        }

        let emulator = APNSEmulator(configuration: configuration)
        for fault in try parsedFaults() { emulator.injectFault(fault) }
        let demoKey = try emulator.makeDemoKey(teamID: teamID, keyID: keyID, bundleID: bundleID)
        // Started before the group, so that its listeners (and the state file scripts read) are
        // announced once they are bound; the group then serves until SIGTERM or SIGINT.
        try await emulator.start()
        var p8Path: String?
        if let stateDir {
            let written = try APNSEmulatorStateFile.write(emulator: emulator, demoKey: demoKey, to: URL(fileURLWithPath: stateDir))
            p8Path = written.demoKey?.p8Path
        }
        // Written unbuffered so a script reading the output sees it at once.
        FileHandle.standardOutput.write(Data((Self.summary(of: emulator, demoKey: demoKey, p8Path: p8Path, stateDir: stateDir) + "\n").utf8))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [emulator],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: configuration.logger
            )
        )
        try await group.run()
    }

    static func parsePorts(_ specifications: [String]) throws -> [APNSEmulatorListener: Int] {
        var ports: [APNSEmulatorListener: Int] = [:]
        for specification in specifications {
            let parts = specification.split(separator: "=")
            let names = parts.first?.split(separator: "-") ?? []
            guard parts.count == 2, names.count == 3,
                let environment = APNSEnvironment(rawValue: String(names[0])),
                let kind = APNSEmulatorListener.Kind(rawValue: String(names[1])),
                let transport = APNSEmulatorListener.Transport(rawValue: String(names[2])),
                let port = Int(parts[1]), (0...65535).contains(port)
            else {
                throw ValidationError("--port \(specification): expected ENV-KIND-TRANSPORT=PORT, e.g. sandbox-push-tls=2197")
            }
            ports[APNSEmulatorListener(environment: environment, kind: kind, transport: transport)] = port
        }
        return ports
    }
}

extension EmulatorCommand {
    /// What `marquee emulator` prints once its listeners are bound.
    static func summary(of emulator: APNSEmulator, demoKey: APNSEmulatorDemoKey, p8Path: String?, stateDir: String?) -> String {
        var lines = ["Marquee APNs emulator"]
        for (listener, _) in emulator.listeners.sorted(by: { $0.key.description < $1.key.description }) {
            lines.append("  \(listener.description.padding(toLength: 34, withPad: " ", startingAt: 0)) \(emulator.url(for: listener) ?? "")")
        }
        if let inspection = emulator.inspectionURL { lines.append("  inspection API                     \(inspection)/v1/summary") }
        if let ca = emulator.caCertificatePath { lines.append("  CA certificate                     \(ca)") }
        lines.append("  demo key                           team \(demoKey.teamID), key \(demoKey.keyID), bundle \(demoKey.bundleID)")
        if let p8Path { lines.append("  demo key .p8                       \(p8Path)") }
        if let stateDir { lines.append("  state                              \(stateDir)/\(APNSEmulatorStateFile.fileName)") }
        lines.append("Press Ctrl-C to stop.")
        return lines.joined(separator: "\n")
    }
}
