import Foundation
import Logging
import MarqueeCore
import MarqueeKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's side of every virtual device whose app is connected to a Marquee
/// (``APNSEmulator/connectApp(bundleID:to:)``): it decides what to report with MarqueeKit's own
/// `ActivityCensus`, reads Marquee's asks with `MarqueeBackgroundPush`, and sends MarqueeKit's
/// requests through a `MarqueeTransport` (by default `URLSessionTransport` over `devicesSession`).
///
/// The world hands it events (``AppModelEvent``) through a stream; it works on tasks of its own,
/// never on the emulator's event loops or under the world's lock. Reports wait on the emulator's
/// clock: a start is reported ``EmulatedAppShares/reportDelay`` after it arrived, a background
/// push after the device's drawn wake delay. Started and stopped with the emulator; stopping
/// drops what was still waiting.
final class EmulatedAppModel: Sendable {
    private let runner: AppModelRunner
    private let events: AsyncStream<AppModelEvent>
    private let task = EmulatorBackgroundTask()
    /// How often the clock is read for due reports: the manual clock of a test moves between reads.
    private static let pollInterval: Duration = .milliseconds(20)

    /// The played devices' HTTP client, one for the process (as `URLSessionTransport.sharedSession`,
    /// and for the same reason: FoundationNetworking's session teardown is not safe to race), with
    /// a connection per running device, as phones each have their own. URLSession's default is 6
    /// connections per host, and a request waiting for one inside the session has its timeout
    /// running (24 requests of a second each took 4.2 s through a default session, 2.1 s with 64
    /// connections): the up to `AppModelRunner.devicesAtOnce` devices reporting after a start
    /// queued behind 6, and on a loaded machine each wait could pass MarqueeKit's 15-second timeout
    /// often enough for its retry policy to give a report up, leaving a device that showed the
    /// activity without Marquee ever hearing so.
    static let devicesSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = AppModelRunner.devicesAtOnce
        return URLSession(configuration: configuration)
    }()

    init(state: EmulatorState, events: AsyncStream<AppModelEvent>) {
        let configuration = state.configuration
        self.runner = AppModelRunner(
            state: state,
            transport: configuration.appTransport ?? URLSessionTransport(session: Self.devicesSession),
            logger: configuration.logger
        )
        self.events = events
    }

    func start() {
        let runner = runner
        let events = events
        task.start {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await event in events { await runner.receive(event) }
                }
                group.addTask { await runner.run(pollInterval: Self.pollInterval) }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Stops at once: reports still waiting are dropped, one being sent is cancelled.
    func shutdown() async {
        await runner.stop()
        await task.stop()
    }

    /// Wakes scheduled and not yet played.
    var pendingWakes: Int {
        get async { await runner.pendingWakes }
    }

    /// Wakes played to the end (their reports sent or failed).
    var wakesPlayed: Int {
        get async { await runner.wakesPlayed }
    }

    /// Reports given up, in the order they were.
    var reportsGivenUp: [EmulatedAppReportGivenUp] {
        get async { await runner.reportsGivenUp }
    }

    /// The state the device's app last reported for the event and Marquee took.
    func lastReportedState(environment: APNSEnvironment, deviceID: String, eventKey: String) async -> String? {
        await runner.lastReportedState(environment: environment, deviceID: deviceID, eventKey: eventKey)
    }
}

/// The app model's state: each device's census and the wakes waiting for their time.
actor AppModelRunner {
    private struct DeviceKey: Hashable {
        var environment: APNSEnvironment
        var deviceID: String
    }

    /// The app runs at `due` and reconciles, answering `asks` and knowing `liveEvents` are live.
    /// `attempt` counts the runs since a report last failed: MarqueeKit's `RetryPolicy` decides
    /// whether and when the app tries again, as a real app's client does.
    private struct Wake {
        var due: Date
        var sequence: Int
        var device: DeviceKey
        var asks: [String] = []
        var liveEvents: Set<String> = []
        var attempt = 1
    }

    private let state: EmulatorState
    private let transport: any MarqueeTransport
    /// MarqueeKit's own: a report Marquee did not take (no answer in time, 429, 5xx) is sent again
    /// after its wait; the census, which records only what was taken, decides what to send then.
    private let retryPolicy = RetryPolicy()
    private let logger: Logger
    private var censuses: [DeviceKey: ActivityCensus] = [:]
    private var wakes: [Wake] = []
    /// Devices whose app is running a wake now.
    private var running: Set<DeviceKey> = []
    private var sequence = 0
    private var stopped = false
    private(set) var wakesPlayed = 0
    private(set) var reportsGivenUp: [EmulatedAppReportGivenUp] = []

    init(state: EmulatorState, transport: any MarqueeTransport, logger: Logger) {
        self.state = state
        self.transport = transport
        self.logger = logger
    }

    var pendingWakes: Int { wakes.count }

    func lastReportedState(environment: APNSEnvironment, deviceID: String, eventKey: String) -> String? {
        censuses[DeviceKey(environment: environment, deviceID: deviceID)]?.lastReport(for: eventKey)?.state.rawValue
    }

    func stop() {
        stopped = true
        wakes.removeAll()
    }

    func receive(_ event: AppModelEvent) {
        guard !stopped else { return }
        let now = state.now
        let shares = state.configuration.appShares
        let key = DeviceKey(environment: event.environment, deviceID: event.deviceID)
        // The device's traits and its app's Marquee: no broadcast's delivery changes them.
        let found = state.withWorldBeforeDelivery { world -> (EmulatedAppTraits, EmulatedAppMarquee)? in
            guard let device = world.environments[event.environment]?.devices[event.deviceID]?.device,
                let traits = device.appTraits, let marquee = world.appMarquees[device.bundleID]
            else { return nil }
            return (traits, marquee)
        }
        guard let (traits, marquee) = found, !traits.neverReports else { return }
        let reportAt = now.addingTimeInterval(shares.reportDelay.emulatorSeconds)
        switch event.kind {
        case .started(let payload):
            // The app learns of the event from the start whether or not it shows (with Live
            // Activities off it runs for the start's token update and finds no activity).
            let eventKey = Self.eventKey(inStart: payload, attribute: marquee.eventKeyAttribute)
            schedule(Wake(due: reportAt, sequence: 0, device: key, liveEvents: eventKey.map { [$0] } ?? []))
        case .updated:
            schedule(Wake(due: reportAt, sequence: 0, device: key))
        case .deviceTokenPush(let payload):
            guard traits.answersBackgroundPush, let delay = traits.wakeDelaySeconds else { return }
            guard let push = try? MarqueeBackgroundPush(json: Data(payload)), push.ask == .presence else { return }
            let environment = MarqueeKitEnvironment(event.environment)
            let asks = push.events.filter { $0.environment == environment }.map(\.eventKey)
            guard !asks.isEmpty else { return }
            schedule(Wake(due: now.addingTimeInterval(delay), sequence: 0, device: key, asks: asks))
        case .launched(let liveEvents):
            schedule(Wake(due: now, sequence: 0, device: key, liveEvents: Set(liveEvents)))
        }
    }

    private func schedule(_ wake: Wake) {
        var wake = wake
        sequence += 1
        wake.sequence = sequence
        wakes.append(wake)
    }

    /// How many devices' apps send their reports at once. Devices are phones of their own: one
    /// device's slow or failing request must not hold up the rest. With every wake played one after
    /// another, 10,000 devices' "showing" reports after a start queued the few hundred answers to
    /// Marquee's background push behind them, past the confirmation window.
    static let devicesAtOnce = 64

    /// Plays wakes as their time comes until cancelled: each device's in time order, one device's
    /// wakes after another's only when `devicesAtOnce` devices are already running. A device whose
    /// report hangs (FoundationNetworking's timeout is 15 s) holds up its own later wakes, never
    /// another device's: played in rounds that each waited for their slowest device, one hung report
    /// kept every wake that came due meanwhile (a background push's answer among them) waiting.
    func run(pollInterval: Duration) async {
        await withDiscardingTaskGroup { group in
            while !stopped, !Task.isCancelled {
                for wakes in takeDue() {
                    group.addTask { await self.play(wakes) }
                }
                try? await Task.sleep(for: pollInterval)
            }
        }
    }

    /// The due wakes of devices not running now, grouped by device in time order, for as many
    /// devices as may start; those devices are running from here until their wakes have played.
    private func takeDue() -> [[Wake]] {
        let room = Self.devicesAtOnce - running.count
        guard room > 0 else { return [] }
        let now = state.now
        let due = wakes.filter { $0.due <= now && !running.contains($0.device) }
            .sorted { ($0.due, $0.sequence) < ($1.due, $1.sequence) }
        guard !due.isEmpty else { return [] }
        var byDevice: [DeviceKey: [Wake]] = [:]
        var order: [DeviceKey] = []
        for wake in due {
            if byDevice[wake.device] == nil {
                guard order.count < room else { continue }
                order.append(wake.device)
            }
            byDevice[wake.device, default: []].append(wake)
        }
        let taken = Set(byDevice.values.joined().map(\.sequence))
        wakes.removeAll { taken.contains($0.sequence) }
        running.formUnion(order)
        return order.compactMap { byDevice[$0] }
    }

    /// One device's due wakes, in order; then the device may run again.
    private func play(_ wakes: [Wake]) async {
        defer { if let device = wakes.first?.device { running.remove(device) } }
        for wake in wakes {
            guard !stopped, !Task.isCancelled else { return }
            await play(wake)
            wakesPlayed += 1
        }
    }

    /// The app runs: it lists its activities, decides with the census, and sends each report.
    private func play(_ wake: Wake) async {
        let now = state.now
        let configuration = state.configuration
        let found = state.withWorld { world -> (EmulatedDevice, [EmulatedActivity], EmulatedAppMarquee)? in
            guard let env = world.environments[wake.device.environment],
                let device = env.devices[wake.device.deviceID]?.device,
                let marquee = world.appMarquees[device.bundleID]
            else { return nil }
            return (device, device.activityIDs.compactMap { env.activities[$0]?.activity }, marquee)
        }
        guard let (device, activities, marquee) = found, device.isAppInstalled else { return }
        let observed = activities.compactMap { activity -> ObservedActivity? in
            var settled = activity
            settled.settle(now: now, configuration: configuration)
            guard case .string(let eventKey)? = settled.attributes[marquee.eventKeyAttribute],
                let state = ObservedActivity.State(rawValue: settled.phase.rawValue)
            else { return nil }
            return ObservedActivity(id: settled.id, eventKey: eventKey, state: state)
        }
        var census = censuses[wake.device] ?? ActivityCensus()
        census.ask(about: wake.asks, at: now)
        let decision = census.reconcile(observed, liveEvents: wake.liveEvents, now: now)
        censuses[wake.device] = census
        guard let pushToStartToken = Self.pushToStartToken(of: device, attributesType: marquee.attributesType) else {
            return
        }
        let requests = MarqueeRequests(
            baseURL: marquee.baseURL,
            appKey: marquee.appKey,
            environment: MarqueeKitEnvironment(wake.device.environment)
        )
        var failure: MarqueeKitError?
        var unsent: [MarqueeKit.PresenceReport] = []
        defer { if let failure { retry(wake, after: failure, unsent: unsent) } }
        for report in decision.reports {
            guard !stopped, !Task.isCancelled else { return }
            let request: MarqueeHTTPRequest
            do throws(MarqueeKitError) {
                request = try requests.reportPresence(report, pushToStartToken: pushToStartToken)
            } catch {
                logger.debug("app model: no report could be made", metadata: ["emulator.error": "\(error)"])
                continue
            }
            do {
                let response = try await transport.send(request)
                if (200..<300).contains(response.status) {
                    // Recorded on the census as it is now: events may have arrived during the send.
                    censuses[wake.device]?.recordSent(report, at: state.now)
                } else {
                    failure = .rejected(MarqueeRejection(response))
                    unsent.append(report)
                    logger.debug(
                        "app model: Marquee refused a presence report",
                        metadata: ["emulator.status": "\(response.status)", "emulator.eventKey": "\(report.eventKey)"]
                    )
                }
            } catch {
                // Unsent: the census decides it again when the app next runs.
                failure = .unreachable(String(describing: error))
                unsent.append(report)
                logger.debug("app model: a presence report found no Marquee", metadata: ["emulator.error": "\(error)"])
            }
        }
    }

    /// A report of `wake` was not taken: the app runs again when MarqueeKit's retry policy says
    /// (a busy Marquee's timeout or 429 is not the end of what the device has to say), or gives up
    /// until something else runs it (`reportsGivenUp` keeps what it gave up).
    private func retry(_ wake: Wake, after failure: MarqueeKitError, unsent: [MarqueeKit.PresenceReport]) {
        guard !stopped else { return }
        let now = state.now
        guard
            case .retry(let wait) = retryPolicy.decide(
                after: failure,
                attempt: wake.attempt,
                now: now,
                randomFraction: .random(in: 0..<1)
            )
        else {
            for report in unsent {
                let givenUp = EmulatedAppReportGivenUp(
                    environment: wake.device.environment,
                    deviceID: wake.device.deviceID,
                    eventKey: report.eventKey,
                    state: report.state.rawValue,
                    attempts: wake.attempt,
                    failure: failure.description
                )
                reportsGivenUp.append(givenUp)
                logger.notice("app model: a presence report given up", metadata: ["emulator.report": "\(givenUp)"])
            }
            return
        }
        schedule(
            Wake(
                due: now.addingTimeInterval(wait.emulatorSeconds),
                sequence: 0,
                device: wake.device,
                attempt: wake.attempt + 1
            )
        )
    }

    private static func pushToStartToken(of device: EmulatedDevice, attributesType: String?) -> String? {
        if let attributesType { return device.pushToStartTokens[attributesType] }
        return device.pushToStartTokens.sorted { $0.key < $1.key }.first?.value
    }

    private static func eventKey(inStart payload: [UInt8], attribute: String) -> String? {
        guard let parsed = PushPayload(bytes: payload), case .string(let key)? = parsed.aps?["attributes"]?[attribute]
        else { return nil }
        return key
    }
}

extension MarqueeKitEnvironment {
    init(_ environment: APNSEnvironment) {
        switch environment {
        case .sandbox: self = .sandbox
        case .production: self = .production
        }
    }
}
