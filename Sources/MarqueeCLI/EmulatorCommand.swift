import ArgumentParser
import Foundation
import Logging
import MarqueeCore
import MarqueeEmulator
import MarqueeServer
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
            and the demo key's .p8. Runs until SIGINT or SIGTERM. Every setting is a configuration key \
            (emulator.*, in parentheses below) that can also come from the environment \
            (MARQUEE_ + the key in upper snake case, e.g. MARQUEE_EMULATOR_HOST) or a JSON file (--config); \
            flags win over the environment, the environment over the file.
            """
    )

    @Option(help: "Address to listen on (emulator.host, default 127.0.0.1).")
    var host: String?

    @Option(
        help: ArgumentHelp(
            """
            Answer as Apple's servers were seen answering (observed, the default) or as Apple's documentation \
            says (documented) (emulator.profile).
            """,
            valueName: "observed|documented"
        )
    )
    var profile: APNSEmulatorProfile?

    @Option(
        name: .customLong("port"),
        help: ArgumentHelp(
            """
            A fixed port for one listener, as LISTENER=PORT (repeatable; emulator.ports, comma-separated). \
            LISTENER is ENV-KIND-TRANSPORT: sandbox|production, push|channelManagement, tls|h2c; e.g. \
            sandbox-push-h2c=8080.
            """,
            valueName: "listener=port"
        )
    )
    var ports: [String] = []

    @Option(help: "Port of the JSON inspection API (emulator.inspectionPort; 0, the default: any free port).")
    var inspectionPort: Int?

    @Flag(inversion: .prefixedNo, help: "Serve HTTP/2 over TLS (emulator.tls, default on).")
    var tls: Bool?

    @Flag(inversion: .prefixedNo, help: "Serve cleartext HTTP/2, h2c with prior knowledge (emulator.h2c, default on).")
    var h2c: Bool?

    @Option(help: "Directory for emulator.json, ca.pem and the demo key's .p8 (emulator.stateDir).")
    var stateDir: String?

    @Option(
        help:
            """
            SETTINGS_MAX_CONCURRENT_STREAMS once a provider token was accepted (emulator.maxConcurrentStreams, \
            default 1000).
            """
    )
    var maxConcurrentStreams: Int?

    @Option(help: "Team ID of the demo key (emulator.teamID, default EMUTEAM001).")
    var teamID: String?

    @Option(help: "Key ID of the demo key (emulator.keyID; random when absent).")
    var keyID: String?

    @Option(help: "Bundle ID of the demo app (emulator.bundleID, default com.example.marquee).")
    var bundleID: String?

    @Option(help: "Starts a device accepts per hour (emulator.pushToStartBudget, default 10; 0: unlimited).")
    var pushToStartBudget: Int?

    @Option(help: "Priority-10 updates per activity per hour (emulator.priorityBudget, default 40; 0: unlimited).")
    var priorityBudget: Int?

    @Option(help: "Pushes kept per token or channel for inspection (emulator.history, default 50).")
    var history: Int?

    @Option(
        help:
            """
            Close connections silent this many seconds with GOAWAY IdleTimeout (emulator.idleTimeoutSeconds; 0, \
            the default: never).
            """
    )
    var idleTimeout: Double?

    @Option(
        help:
            """
            Broadcasts per hour a No-Message-Stored channel may publish before 429 TooManyRequests \
            (emulator.broadcastBudgetNoStorage; 0, the default: unlimited).
            """
    )
    var broadcastBudgetNoStorage: Int?

    @Option(
        help:
            """
            Broadcasts per hour a Most-Recent-Message-Stored channel may publish before 429 TooManyRequests \
            (emulator.broadcastBudgetStored; 0, the default: unlimited).
            """
    )
    var broadcastBudgetStored: Int?

    @Option(
        help:
            """
            Channel-management requests per app and hour before 429 TooManyRequests \
            (emulator.channelManagementBudget; 0, the default: unlimited).
            """
    )
    var channelManagementBudget: Int?

    @Option(
        help:
            """
            Seconds between broadcasts on one channel before 429 TooManyRequests; Apple speaks of about 1 \
            (emulator.broadcastThrottleSeconds; 0, the default: no throttling).
            """
    )
    var broadcastThrottle: Double?

    @Option(
        help: ArgumentHelp(
            """
            Play the demo app against this Marquee (emulator.marqueeURL): its devices report presence there as \
            MarqueeKit would, with the app-role key in the environment variable MARQUEE_EMULATOR_APP_KEY (kept \
            off the command line).
            """,
            valueName: "url"
        )
    )
    var marqueeURL: String?

    @Option(
        help:
            """
            The played app's attributes-type whose push-to-start token the reports name (emulator.attributesType; \
            default: the device's first).
            """
    )
    var attributesType: String?

    @Option(
        help:
            """
            The member of a start's attributes that holds the event key (emulator.eventKeyAttribute, default \
            eventKey).
            """
    )
    var eventKeyAttribute: String?

    @Option(help: "Share (0–1) of the played app's devices that never report (emulator.neverReportShare, default 0).")
    var neverReportShare: Double?

    @Option(
        help:
            """
            Share (0–1) of the played app's devices offline at registration, APNs holding their newest push \
            (emulator.offlineShare, default 0).
            """
    )
    var offlineShare: Double?

    @Option(
        help:
            """
            Share (0–1) of the played app's devices with Live Activities turned off: starts answer 200, nothing \
            shows (emulator.liveActivitiesOffShare, default 0).
            """
    )
    var liveActivitiesOffShare: Double?

    @Option(
        help:
            """
            Share (0–1) of the played app's devices that wake for Marquee's background push; the rest never do \
            (emulator.answerShare, default 1).
            """
    )
    var answerShare: Double?

    @Option(
        help:
            """
            Seconds within which an answering device wakes for a background push, drawn evenly per device \
            (emulator.wakeWithinSeconds, default 10).
            """
    )
    var wakeWithin: Double?

    @Option(
        help:
            """
            Seconds after a start or an end before the app reports what it shows (emulator.reportDelaySeconds, \
            default 2).
            """
    )
    var reportDelay: Double?

    @Option(
        help:
            """
            Seed of the per-device draws: the same seed and registrations give the same devices (emulator.seed, \
            default 1).
            """
    )
    var seed: UInt64?

    @Option(
        name: .customLong("fault"),
        help: ArgumentHelp(
            #"""
            A fault to inject from the start, as the inspection API's POST /v1/faults takes it (repeatable; \#
            emulator.faults, a JSON array), e.g. '{"action":"respond","reason":"TooManyRequests",\#
            "probability":0.1}'.
            """#,
            valueName: "json"
        )
    )
    var faults: [String] = []

    @Option(name: .customLong("config"), help: "A JSON file of configuration keys.")
    var configFile: String?

    @Option(
        help:
            """
            Log level on standard error (emulator.logLevel, default info): trace, debug (every rejected request), \
            info, notice, warning, error, critical.
            """
    )
    var logLevel: Logger.Level?

    /// The flags given, as configuration keys: they win over the environment and the file.
    var flagValues: [String: String] {
        var values: [String: String] = [:]
        values["emulator.host"] = host
        values["emulator.profile"] = profile?.rawValue
        values["emulator.ports"] = ports.isEmpty ? nil : ports.joined(separator: ",")
        values["emulator.inspectionPort"] = inspectionPort.map(String.init)
        values["emulator.tls"] = tls.map(String.init)
        values["emulator.h2c"] = h2c.map(String.init)
        values["emulator.stateDir"] = stateDir
        values["emulator.maxConcurrentStreams"] = maxConcurrentStreams.map(String.init)
        values["emulator.teamID"] = teamID
        values["emulator.keyID"] = keyID
        values["emulator.bundleID"] = bundleID
        values["emulator.pushToStartBudget"] = pushToStartBudget.map(String.init)
        values["emulator.priorityBudget"] = priorityBudget.map(String.init)
        values["emulator.history"] = history.map(String.init)
        values["emulator.idleTimeoutSeconds"] = idleTimeout.map { String($0) }
        values["emulator.broadcastBudgetNoStorage"] = broadcastBudgetNoStorage.map(String.init)
        values["emulator.broadcastBudgetStored"] = broadcastBudgetStored.map(String.init)
        values["emulator.channelManagementBudget"] = channelManagementBudget.map(String.init)
        values["emulator.broadcastThrottleSeconds"] = broadcastThrottle.map { String($0) }
        values["emulator.marqueeURL"] = marqueeURL
        values["emulator.attributesType"] = attributesType
        values["emulator.eventKeyAttribute"] = eventKeyAttribute
        values["emulator.neverReportShare"] = neverReportShare.map { String($0) }
        values["emulator.offlineShare"] = offlineShare.map { String($0) }
        values["emulator.liveActivitiesOffShare"] = liveActivitiesOffShare.map { String($0) }
        values["emulator.answerShare"] = answerShare.map { String($0) }
        values["emulator.wakeWithinSeconds"] = wakeWithin.map { String($0) }
        values["emulator.reportDelaySeconds"] = reportDelay.map { String($0) }
        values["emulator.seed"] = seed.map(String.init)
        values["emulator.faults"] = faults.isEmpty ? nil : "[" + faults.joined(separator: ",") + "]"
        values["emulator.logLevel"] = logLevel?.rawValue
        return values
    }

    func run() async throws {
        let settings = try await ConfigurationError.exitingOnRefusal {
            try await EmulatorSettings.load(flags: flagValues, file: configFile)
        }
        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var configuration = settings.emulator
        configuration.logger = Logger(label: "marquee.emulator")
        if let stateDir = settings.stateDirectory {
            let directory = URL(fileURLWithPath: stateDir)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            configuration.caCertificatePath = directory.appendingPathComponent("ca.pem").path
        }
        let emulator = APNSEmulator(configuration: configuration)
        for fault in settings.faults { emulator.injectFault(fault) }
        let demoKey = try emulator.makeDemoKey(
            teamID: settings.demoTeamID,
            keyID: settings.demoKeyID,
            bundleID: settings.demoBundleID
        )
        // Started before the group, so that its listeners (and the state file scripts read) are
        // announced once they are bound; the group then serves until SIGTERM or SIGINT.
        try await emulator.start()
        var p8Path: String?
        if let stateDir = settings.stateDirectory {
            let written = try APNSEmulatorStateFile.write(
                emulator: emulator,
                demoKey: demoKey,
                to: URL(fileURLWithPath: stateDir)
            )
            p8Path = written.demoKey?.p8Path
        }
        // Written unbuffered so a script reading the output sees it at once.
        let summary = Self.summary(of: emulator, demoKey: demoKey, p8Path: p8Path, stateDir: settings.stateDirectory)
        FileHandle.standardOutput.write(Data((summary + "\n").utf8))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [emulator],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: configuration.logger
            )
        )
        try await group.run()
    }
}

extension EmulatorCommand {
    /// What `marquee emulator` prints once its listeners are bound.
    static func summary(
        of emulator: APNSEmulator,
        demoKey: APNSEmulatorDemoKey,
        p8Path: String?,
        stateDir: String?
    ) -> String {
        var lines = ["Marquee APNs emulator"]
        for (listener, _) in emulator.listeners.sorted(by: { $0.key.description < $1.key.description }) {
            lines.append(
                """
                  \(listener.description.padding(toLength: 34, withPad: " ", startingAt: 0)) \
                  \(emulator.url(for: listener) ?? "")
                """
            )
        }
        if let inspection = emulator.inspectionURL {
            lines.append("  inspection API                     \(inspection)/v1/summary")
        }
        if let ca = emulator.caCertificatePath { lines.append("  CA certificate                     \(ca)") }
        lines.append(
            """
              demo key                           team \(demoKey.teamID), key \(demoKey.keyID), bundle \
              \(demoKey.bundleID)
            """
        )
        if let p8Path { lines.append("  demo key .p8                       \(p8Path)") }
        if let stateDir {
            lines.append("  state                              \(stateDir)/\(APNSEmulatorStateFile.fileName)")
        }
        lines.append("Press Ctrl-C to stop.")
        return lines.joined(separator: "\n")
    }
}
