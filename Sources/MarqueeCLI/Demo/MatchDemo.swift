import Foundation
import MarqueeClient
import MarqueeCore
import MarqueeEmulator
import MarqueeServer

/// A match told end to end on a running service with its emulator in-process, the way a user
/// would tell it: an app, an event and its channel, virtual devices of mixed iOS versions whose
/// push-to-start tokens are registered over the REST API, the start as a job, each moment of the
/// match as a broadcast (iOS 18 through the channel, iOS 17 through the update tokens their apps
/// reported), the end, and the event closed with its channel. Everything goes through the REST
/// API with `MarqueeClient`; only the devices themselves (registering them, reading what they
/// show, and what their apps would report) come from the emulator.
struct MatchDemo: Sendable {
    static let attributesType = "MatchAttributes"
    static let bundleID = "com.example.marquee.demo"
    static let teamID = "DEMOTEAM01"
    static let signingKeyID = "DEMOKEY001"
    /// The devices' versions, in turn: a push-to-start on 17.2 and 17.4 is answered with an
    /// update token; 18 joins the channel.
    static let versions = [IOSVersion(17, 2), IOSVersion(17, 4), IOSVersion(18, 0)]

    var script: MatchScript
    var deviceCount: Int

    /// What the demo found.
    struct Outcome: Sendable {
        var steps: [StepTimer.Step]
        var census: DeviceCensus
        var lockScreens: [LockScreen]
        /// The app's publisher key, for the web console after the match (`--console`).
        var publisherKey: String
    }

    /// Tells the match on `started`; `onStep` hears each step as it completes. `startup` is how
    /// long the service took to start, the first step.
    func run(
        on started: MarqueeServer.Started,
        startup: Duration,
        onStep: @escaping @Sendable (StepTimer.Step) -> Void
    ) async throws -> Outcome {
        guard let emulator = started.emulator else {
            throw CLIFailure(.unexpected, "the demo's service runs no emulator")
        }
        guard let serverURL = URL(string: started.baseURL), let deploymentKey = started.firstDeploymentKey else {
            throw CLIFailure(.unexpected, "the demo's service gave no address or deployment key")
        }
        var timer = StepTimer(onStep: onStep)
        timer.record(
            StepTimer.Step(
                name: "Start the service",
                detail: "SQLite in a temporary folder, APNs emulator in-process, API on \(started.baseURL)",
                duration: startup
            )
        )
        let operatorClient = MarqueeClient(serverURL: serverURL, apiKey: deploymentKey)

        let keys = try await timer.measure("Create an app") {
            try await createApp(operatorClient, emulator: emulator)
        }
        let publisher = MarqueeClient(serverURL: serverURL, apiKey: keys.publisher)
        let app = MarqueeClient(serverURL: serverURL, apiKey: keys.app)

        let channelID = try await timer.measure("Create the event") { try await createEvent(publisher) }
        let devices = try await timer.measure("Register \(Formatting.count(deviceCount)) virtual devices") {
            try registerDevices(emulator)
        }
        try await timer.measure("Register push-to-start tokens") { try await registerTokens(of: devices, app) }
        try await timer.measure("Start the Live Activity") { try await start(publisher, emulator: emulator) }
        try await timer.measure("iOS 17 apps report update tokens") {
            try await reportUpdateTokens(app, devices: devices, emulator: emulator)
        }

        var lockScreens: [LockScreen] = []
        for moment in script.moments {
            try await timer.measure(moment.step) { try await broadcast(moment, publisher) }
            if moment.period == "Half time",
                let screen = Self.lockScreen(of: IOSVersion(18, 0), emulator: emulator, note: "half time")
            {
                lockScreens.append(screen)
            }
        }
        try await timer.measure("Close the event") {
            try await close(publisher, channelID: channelID, emulator: emulator)
        }

        for version in Self.versions.reversed() {
            if let screen = Self.lockScreen(of: version, emulator: emulator, note: "full time") {
                lockScreens.append(screen)
            }
        }
        let census = DeviceCensus(
            devices: emulator.devices(in: .sandbox),
            activities: emulator.activities(in: .sandbox),
            expected: script.finalMoment,
            script: script
        )
        return Outcome(steps: timer.steps, census: census, lockScreens: lockScreens, publisherKey: keys.publisher)
    }

    // MARK: Steps

    private struct AppKeys: Sendable {
        var publisher: String
        var app: String
    }

    /// The app with its .p8 (made by the emulator, as Apple's portal would hand one out) and a
    /// publisher and an app key.
    private func createApp(_ client: MarqueeClient, emulator: APNSEmulator) async throws -> (AppKeys, detail: String) {
        let key = try emulator.makeDemoKey(
            teamID: Self.teamID,
            keyID: Self.signingKeyID,
            bundleID: Self.bundleID,
            environments: [.sandbox]
        )
        let request = Components.Schemas.CreateAppRequest(
            name: "Demo Scores",
            bundleID: Self.bundleID,
            teamID: Self.teamID,
            environments: [.sandbox]
        )
        let app = try await client.send { try await $0.createApp(body: .json(request)).created.body.json }.value
        let upload = Components.Schemas.SigningKeyUpload(keyID: key.keyID, privateKey: key.p8PEM)
        _ = try await client.send {
            try await $0.putSigningKey(path: .init(appID: app.id), body: .json(upload)).ok.body.json
        }
        var keys: [Components.Schemas.Role: String] = [:]
        for role in [Components.Schemas.Role.publisher, .app] {
            let created = try await client.send {
                try await $0.createAPIKey(path: .init(appID: app.id), body: .json(.init(role: role, label: "demo")))
                    .created.body.json
            }
            keys[role] = created.value.key
        }
        return (
            AppKeys(publisher: keys[.publisher] ?? "", app: keys[.app] ?? ""),
            "\(Self.bundleID): signing key \(key.keyID), a publisher key and an app key"
        )
    }

    /// The event, with its broadcast channel created at APNs; answers the channel's Marquee ID.
    private func createEvent(_ client: MarqueeClient) async throws -> (String, detail: String) {
        let now = Date()
        let request = Components.Schemas.PutEventRequest(
            title: script.title,
            attributesType: Self.attributesType,
            environments: [.sandbox],
            storagePolicy: .mostRecentMessage,
            plannedStart: now,
            plannedEnd: now.addingTimeInterval(2 * 3600)
        )
        let event = try await client.send { [eventKey = script.eventKey] in
            switch try await $0.putEvent(path: .init(eventKey: eventKey), body: .json(request)) {
            case .created(let created): try created.body.json
            case .ok(let ok): try ok.body.json
            case let other: throw UnexpectedOutput(other)
            }
        }.value
        guard let channel = event.channels.first(where: { $0.environment == .sandbox }) else {
            throw CLIFailure(.unexpected, "the event \(event.eventKey) has no sandbox channel")
        }
        return (
            channel.id,
            "\(event.eventKey): broadcast channel \(channel.channelID ?? channel.id) created at APNs (sandbox)"
        )
    }

    /// Virtual devices with the app installed, the iOS versions in turn.
    private func registerDevices(_ emulator: APNSEmulator) throws -> ([EmulatedDevice], detail: String) {
        var devices: [EmulatedDevice] = []
        devices.reserveCapacity(deviceCount)
        for index in 0..<deviceCount {
            devices.append(
                try emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: Self.bundleID,
                    iOSVersion: Self.versions[index % Self.versions.count],
                    pushToStartAttributesTypes: [Self.attributesType]
                )
            )
        }
        let counts = Self.versions.map { version in
            "\(Formatting.count(devices.count { $0.iOSVersion == version })) on iOS \(version)"
        }
        return (devices, counts.joined(separator: ", "))
    }

    /// What each device's app sends its backend at launch: its push-to-start token, in batches.
    private func registerTokens(of devices: [EmulatedDevice], _ client: MarqueeClient) async throws -> String {
        let items = devices.map { device in
            Components.Schemas.PushToStartTokenBatchItem(
                token: device.pushToStartTokens[Self.attributesType] ?? "",
                environment: .sandbox,
                attributesType: Self.attributesType,
                deviceID: device.id,
                tags: ["demo"],
                iosVersion: device.iOSVersion.description
            )
        }
        var batches = 0
        for start in stride(from: 0, to: items.count, by: 5_000) {
            let batch = Components.Schemas.PushToStartTokenBatch(
                tokens: Array(items[start..<min(start + 5_000, items.count)])
            )
            _ = try await client.send { try await $0.registerPushToStartTokens(body: .json(batch)).ok.body.json }
            batches += 1
        }
        return "\(Formatting.count(items.count)) tokens in \(batches) POST /v1/push-to-start-tokens/batch"
    }

    /// The kick-off: a start job to every token, followed until it is done.
    private func start(_ client: MarqueeClient, emulator: APNSEmulator) async throws -> String {
        let kickOff = script.kickOff
        let request = Components.Schemas.StartRequest(
            environment: .sandbox,
            attributes: .init(
                additionalProperties: try JSONArgument.object(script.attributes, describing: "attributes")
            ),
            contentState: .init(
                additionalProperties: try JSONArgument.object(kickOff.contentState, describing: "content-state")
            ),
            alert: .init(
                additionalProperties: try JSONArgument.object(kickOff.alert?.object ?? [:], describing: "alert")
            )
        )
        let accepted = try await client.send { [eventKey = script.eventKey] in
            switch try await $0.startEventActivities(path: .init(eventKey: eventKey), body: .json(request)).accepted
                .body.json
            {
            case .Job(let job): job
            case let other: throw UnexpectedOutput(other)
            }
        }.value
        let job = try await Self.waitForJob(accepted.id, client)
        guard job.state == .succeeded else {
            throw CLIFailure(
                .partial,
                """
                the start job \(job.id) ended \(job.state.rawValue): \
                \(job.lastError ?? "see marquee jobs show \(job.id)")
                """
            )
        }
        let onChannel = emulator.activities(in: .sandbox).count { $0.channelID != nil }
        return
            """
            \(job.id): \(Formatting.count(job.progress.accepted)) accepted, \
            \(Formatting.count(job.progress.failed)) failed; 
            """
                + "\(Formatting.count(onChannel)) on the channel"
    }

    /// What the app on each iOS 17 device does once its activity started: it reports the
    /// activity's update token, naming the push-to-start token that started it.
    private func reportUpdateTokens(
        _ client: MarqueeClient,
        devices: [EmulatedDevice],
        emulator: APNSEmulator
    ) async throws -> String {
        let pushToStart = Dictionary(
            uniqueKeysWithValues: devices.map { ($0.id, $0.pushToStartTokens[Self.attributesType] ?? "") }
        )
        let reports = emulator.reportedUpdateTokens(in: .sandbox)
        let eventKey = script.eventKey
        try await withThrowingTaskGroup(of: Void.self) { group in
            // A few at a time, as many phones would, without flooding the service.
            var inFlight = 0
            for report in reports {
                if inFlight == 8 {
                    try await group.next()
                    inFlight -= 1
                }
                let registration = Components.Schemas.ActivityUpdateTokenRegistration(
                    eventKey: eventKey,
                    environment: .sandbox,
                    token: report.token,
                    pushToStartToken: pushToStart[report.deviceID]
                )
                group.addTask {
                    _ = try await client.send {
                        try await $0.putActivityUpdateToken(
                            path: .init(activityID: report.activityID),
                            body: .json(registration)
                        ).ok.body.json
                    }
                }
                inFlight += 1
            }
            try await group.waitForAll()
        }
        return "\(Formatting.count(reports.count)) PUT /v1/activities/{id}/update-token"
    }

    /// One moment: a broadcast to the channel, then the job that pushes it to each iOS 17
    /// activity through its update token, followed until it is done.
    private func broadcast(_ moment: MatchMoment, _ client: MarqueeClient) async throws -> String {
        let request = Components.Schemas.BroadcastRequest(
            event: moment.ends ? .end : .update,
            contentState: try JSONArgument.object(moment.contentState, describing: "content-state"),
            alert: try moment.alert.map { alert throws(CLIFailure) in
                try JSONArgument.object(alert.object, describing: "alert")
            }
        )
        let answer = try await client.send { [eventKey = script.eventKey] in
            try await $0.createBroadcast(path: .init(eventKey: eventKey), body: .json(request)).broadcastResult
        }.value
        var parts: [String] = []
        for result in answer.results {
            var line = "channel \(result.status.rawValue)"
            if let priority = result.priority { line += " at priority \(priority)" }
            if result.downgraded == true {
                line += " (downgraded from \(result.requestedPriority ?? 10): \(result.reason ?? "budget"))"
            }
            if result.status == .failed {
                throw CLIFailure(
                    .unavailable,
                    """
                    the broadcast \"\(moment.step)\" failed: \
                    \(result.apnsReason ?? result.reason ?? "APNs refused it")
                    """
                )
            }
            parts.append(line)
            if let updates = result.activityUpdates {
                let job = try await Self.waitForJob(updates.jobID, client)
                guard job.state == .succeeded else {
                    throw CLIFailure(
                        .partial,
                        "the update job \(job.id) ended \(job.state.rawValue): \(job.lastError ?? "")"
                    )
                }
                parts.append(
                    """
                    \(Formatting.count(job.progress.accepted)) of \(Formatting.count(updates.total)) update \
                    tokens accepted
                    """
                )
            }
        }
        return parts.joined(separator: "; ")
    }

    /// The event closed: its channel is deleted at APNs, and asking for it answers 404.
    private func close(_ client: MarqueeClient, channelID: String, emulator: APNSEmulator) async throws -> String {
        let event = try await client.send { [eventKey = script.eventKey] in
            try await $0.closeEvent(path: .init(eventKey: eventKey)).ok.body.json
        }.value
        let channel = try await client.send { try await $0.getChannel(path: .init(channelID: channelID)).ok.body.json }
            .value
        let apnsID = channel.channelID ?? ""
        let goneAtAPNs = emulator.channels(in: .sandbox).contains { $0.id == apnsID && $0.isDeleted }
        let status = try await Self.eventChannelStatus(client, eventKey: script.eventKey)
        let lookup = "GET /v1/events/\(script.eventKey)/channels/sandbox answers \(status)"
        guard goneAtAPNs else {
            throw CLIFailure(.unexpected, "the channel \(apnsID) is still live at APNs after the event closed")
        }
        return "event \(event.state.rawValue); channel \(channel.state.rawValue), gone at APNs; \(lookup)"
    }

    // MARK: Helpers

    /// The status of reading the event's channel ID, as an app would: 404 once it is gone.
    private static func eventChannelStatus(_ client: MarqueeClient, eventKey: String) async throws -> Int {
        do {
            return try await client.send {
                try await $0.getEventChannel(path: .init(eventKey: eventKey, environment: .sandbox)).ok.body.json
            }.status
        } catch {
            let failure: MarqueeClientError = error
            guard failure.kind == .problem, let status = failure.status else { throw failure }
            return status
        }
    }

    /// Polls the job until it finishes: the demo's jobs take a few hundred milliseconds, so a
    /// short poll reads their end sooner than the event stream's quarter-second ticks.
    private static func waitForJob(_ id: String, _ client: MarqueeClient) async throws -> Components.Schemas.Job {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let job = try await client.send { try await $0.getJob(path: .init(jobID: id)).ok.body.json }.value
            if [.succeeded, .failed, .cancelled].contains(job.state) { return job }
            try await Task.sleep(for: .milliseconds(15))
        }
        throw CLIFailure(.unavailable, "the job \(id) did not finish in 120 s")
    }

    /// The Lock Screen of the first device of `version` with a match activity.
    private static func lockScreen(of version: IOSVersion, emulator: APNSEmulator, note: String) -> LockScreen? {
        let devices = emulator.devices(in: .sandbox).filter { $0.iOSVersion == version }
        for device in devices {
            guard let id = device.activityIDs.last, let activity = emulator.activity(id: id, in: .sandbox) else {
                continue
            }
            return LockScreen(activity: activity, device: device, note: note)
        }
        return nil
    }
}
