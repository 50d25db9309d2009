import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeTesting
import Testing

@testable import MarqueeServer

/// Devices whose push-to-start token arrives while an event is live get its start then, once, with
/// the score as it is now and the alert chosen for late joiners; nothing more on a refresh, and
/// nothing where late joining is off, for a list audience, or after the end.
@Suite("Late joiners")
struct LateJoinerAPITests {
    nonisolated(unsafe) static let lateAlert: [String: Any] = [
        "title": "You're in", "body": "Arsenal v Chelsea is on",
    ]  // immutable; [String: Any] is JSON for the test client

    /// New virtual devices (iOS versions in turn) with the emulator, not yet registered with Marquee.
    static func makeDevices(_ count: Int, _ emulator: APNSEmulator, _ app: TestApp) throws -> [EmulatedDevice] {
        try (0..<count).map { index in
            try emulator.registerDevice(
                environment: .sandbox,
                bundleID: app.bundleID,
                iOSVersion: StartFanOutAPITests.versions[index % StartFanOutAPITests.versions.count],
                pushToStartAttributesTypes: ["MatchAttributes"]
            )
        }
    }

    static func token(_ device: EmulatedDevice) -> String { device.pushToStartTokens["MatchAttributes"] ?? "" }

    static func registration(_ device: EmulatedDevice, tags: [String], userID: String?) -> [String: Any] {
        var registration: [String: Any] = [
            "environment": "sandbox",
            "attributesType": "MatchAttributes",
            "iosVersion": device.iOSVersion.description,
            "tags": tags,
        ]
        if let userID { registration["userID"] = userID }
        return registration
    }

    /// Registers the devices' tokens with Marquee: in one batch, or one PUT each.
    static func register(
        _ devices: [EmulatedDevice],
        server: TestServer,
        app: TestApp,
        tags: [String] = ["arsenal"],
        userID: String? = nil,
        batch: Bool
    ) async throws {
        if batch {
            let tokens = devices.map { device -> [String: Any] in
                var item = registration(device, tags: tags, userID: userID)
                item["token"] = token(device)
                return item
            }
            let answer = try await server.client.send(
                "POST",
                "/v1/push-to-start-tokens/batch",
                key: app.appKey,
                json: ["tokens": tokens]
            )
            guard answer.status == 200 else {
                throw TestSetupError("registering a batch answered \(answer.status): \(answer.text)")
            }
        } else {
            for device in devices {
                let answer = try await server.client.send(
                    "PUT",
                    "/v1/push-to-start-tokens/\(token(device))",
                    key: app.appKey,
                    json: registration(device, tags: tags, userID: userID)
                )
                guard answer.status == 200 else {
                    throw TestSetupError("registering a token answered \(answer.status): \(answer.text)")
                }
            }
        }
    }

    static func startBody(audience: [String: Any]? = nil, lateJoiners: [String: Any]? = nil) -> [String: Any] {
        var body = StartFanOutAPITests.startBody
        if let audience { body["audience"] = audience }
        if let lateJoiners { body["lateJoiners"] = lateJoiners }
        return body
    }

    /// Starts the event and waits for the job to finish successfully.
    static func start(_ server: TestServer, _ app: TestApp, event: String, _ body: [String: Any]) async throws {
        let started = try await server.client.send(
            "POST",
            "/v1/events/\(event)/starts",
            key: app.publisherKey,
            json: body
        )
        guard started.status == 202, let location = started.header("Location") else {
            throw TestSetupError("the start answered \(started.status): \(started.text)")
        }
        let job = try await StartFanOutAPITests.waitForJob(server, app, location)
        guard job["state"] as? String == "succeeded" else { throw TestSetupError("the start job ended \(job)") }
    }

    /// What the registration hook queues for these devices now (0 when none is a late joiner of a
    /// live event): the hook's decision itself, which a pump may already have taken from the queue
    /// by the time `pending` looks.
    static func queuedNow(_ devices: [EmulatedDevice], _ server: TestServer, _ app: TestApp) async throws -> Int {
        let appID = try #require(PublicID.parseApp(app.id))
        let keys = devices.map {
            RegisteredTokenKey(environment: .sandbox, attributesType: "MatchAttributes", token: token($0))
        }
        return try await server.store.enqueueLateJoiners(appID: appID, keys, at: Date())
    }

    /// Broadcasts a new score to the event.
    static func score(_ server: TestServer, _ app: TestApp, home: Int, away: Int) async throws {
        let goal = try await server.client.send(
            "POST",
            "/v1/events/match/broadcasts",
            key: app.publisherKey,
            json: ["event": "update", "contentState": ["homeScore": home, "awayScore": away]]
        )
        guard goal.status == 200 else { throw TestSetupError("the broadcast answered \(goal.status): \(goal.text)") }
    }

    static func pending(_ server: TestServer, _ app: TestApp, event: String) async throws -> Int {
        let appID = try #require(PublicID.parseApp(app.id))
        let stored = try #require(try await server.store.event(appID: appID, externalKey: event))
        return try await server.store.pendingStartCount(appID: appID, eventID: stored.id, environment: .sandbox)
    }

    @Test(
        """
        300 started; after a goal, 50 devices registering get one start each with the current score; a refresh or \
        the end sends nothing
        """,
        arguments: TestBackend.allCases
    )
    func lateJoinersGetTheCurrentScore(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let event = try await server.client.send("GET", "/v1/events/match", key: app.publisherKey)
            #expect(event.json["lateJoiners"] as? Bool == true)
            let kickOff = try Self.makeDevices(300, emulator, app)
            try await Self.register(kickOff, server: server, app: app, batch: true)
            try await Self.start(
                server,
                app,
                event: "match",
                Self.startBody(audience: ["tags": ["arsenal"]], lateJoiners: ["alert": Self.lateAlert])
            )
            #expect(emulator.activities(in: .sandbox).count == 300)

            try await Self.score(server, app, home: 1, away: 0)

            // 50 register during the match: half in a batch, half one by one; 5 more with another
            // tag only, outside the start's audience.
            let late = try Self.makeDevices(50, emulator, app)
            try await Self.register(Array(late.prefix(25)), server: server, app: app, batch: true)
            try await Self.register(Array(late.suffix(25)), server: server, app: app, batch: false)
            let outsiders = try Self.makeDevices(5, emulator, app)
            try await Self.register(outsiders, server: server, app: app, tags: ["chelsea"], batch: true)

            try await waitUntil("the 50 late joiners showing the activity") {
                emulator.activities(in: .sandbox).count >= 350
            }
            let appID = try #require(PublicID.parseApp(app.id))
            let stored = try #require(try await server.store.event(appID: appID, externalKey: "match"))
            try await waitUntil("the late-join jobs committing their starts") {
                try await server.store.lateJoinStartCount(appID: appID, eventID: stored.id, environment: .sandbox) == 50
            }
            let byDevice = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
            for device in late {
                let shown = byDevice[device.id] ?? []
                #expect(shown.count == 1, "late device \(device.id) shows \(shown.count) activities")
                guard let activity = shown.first else { continue }
                #expect(
                    activity.contentState?["homeScore"] == .integer(1),
                    "late device \(device.id): \(String(describing: activity.contentState))"
                )
                #expect(activity.lastAlert?["title"] == .string("You're in"))
            }
            for device in kickOff { #expect(byDevice[device.id]?.count == 1) }
            // The jobs that sent them say so; the kick-off does not.
            let jobs =
                try await server.client.send("GET", "/v1/jobs?limit=100", key: app.publisherKey).json["jobs"]
                as? [[String: Any]] ?? []
            let lateJobs = jobs.filter { $0["lateJoiners"] as? Bool == true }
            #expect(!lateJobs.isEmpty && lateJobs.count < jobs.count)
            #expect(lateJobs.reduce(0) { $0 + (StartFanOutAPITests.progress($1, "accepted") ?? 0) } == 50)
            for device in outsiders { #expect(byDevice[device.id] == nil) }
            #expect(try await Self.pending(server, app, event: "match") == 0)

            // Registered again (a refresh) after they started: nothing is queued, nothing sent.
            try await Self.register(
                Array(late.prefix(10)) + Array(kickOff.prefix(10)),
                server: server,
                app: app,
                batch: true
            )
            try await Self.register(Array(late.suffix(3)), server: server, app: app, batch: false)
            #expect(try await Self.pending(server, app, event: "match") == 0)
            #expect(try await Self.queuedNow(late + kickOff, server, app) == 0)

            // After the end, a new device gets nothing.
            #expect(try await server.client.send("POST", "/v1/events/match/close", key: app.publisherKey).status == 200)
            let afterEnd = try Self.makeDevices(5, emulator, app)
            try await Self.register(afterEnd, server: server, app: app, batch: true)
            #expect(try await Self.pending(server, app, event: "match") == 0)
            #expect(try await Self.queuedNow(afterEnd, server, app) == 0)
            #expect(emulator.activities(in: .sandbox).count == 350)
            #expect(
                try await server.store.lateJoinStartCount(appID: appID, eventID: stored.id, environment: .sandbox) == 50
            )
        }
    }

    @Test("two replicas on one PostgreSQL: late joiners registered through either get one start each")
    func acrossReplicas() async throws {
        let emulator = APNSEmulator()
        try await emulator.start()
        defer { Task { await emulator.shutdown() } }
        let settings = try emulator.customTargetSettings()
        try await TestServer.withDatabase(.postgres) { database in
            try await TestServer.run(on: database, settings: settings) { first in
                try await TestServer.run(on: database, settings: settings) { second in
                    let app = try await first.makeApp()
                    try emulator.register(app)
                    #expect(try await first.putEvent(app, key: "match").status == 201)
                    let kickOff = try Self.makeDevices(100, emulator, app)
                    try await Self.register(kickOff, server: first, app: app, batch: true)
                    try await Self.start(first, app, event: "match", Self.startBody())
                    try await Self.score(second, app, home: 2, away: 1)

                    let late = try Self.makeDevices(40, emulator, app)
                    for (index, device) in late.enumerated() {
                        try await Self.register(
                            [device],
                            server: index.isMultiple(of: 2) ? first : second,
                            app: app,
                            batch: index % 4 < 2
                        )
                    }
                    try await waitUntil("the 40 late joiners showing the activity") {
                        emulator.activities(in: .sandbox).count >= 140
                    }
                    let byDevice = Dictionary(grouping: emulator.activities(in: .sandbox), by: \.deviceID)
                    for device in kickOff + late { #expect(byDevice[device.id]?.count == 1, "device \(device.id)") }
                    for device in late {
                        #expect(byDevice[device.id]?.first?.contentState?["homeScore"] == .integer(2))
                    }
                    // Nothing else is on its way: every queued start was taken.
                    try await waitUntil("the queue emptying") {
                        try await Self.pending(second, app, event: "match") == 0
                    }
                    #expect(emulator.activities(in: .sandbox).count == 140)
                }
            }
        }
    }

    @Test(
        "late joining off for the start, off for the event, or a user-ID audience: a new device gets nothing",
        arguments: TestBackend.allCases
    )
    func lateJoiningOff(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let emulator = try server.emulator
            // Each case in an app of its own: a device registering reaches only its app's events.
            let cases: [(name: String, lateJoinersOnEvent: Bool, body: [String: Any])] = [
                ("start", true, Self.startBody(lateJoiners: ["enabled": false])),
                ("event", false, Self.startBody()),
                ("users", true, Self.startBody(audience: ["userIDs": ["fan-1"]])),
            ]
            for (name, onEvent, body) in cases {
                let app = try await server.makeApp()
                #expect(try await server.putEvent(app, key: "match").status == 201)
                if !onEvent {
                    var put = try await server.client.send("GET", "/v1/events/match", key: app.publisherKey).json
                    for key in ["id", "eventKey", "state", "channels", "funnel", "createdAt", "updatedAt", "timeline"] {
                        put.removeValue(forKey: key)
                    }
                    put["lateJoiners"] = false
                    let updated = try await server.client.send(
                        "PUT",
                        "/v1/events/match",
                        key: app.publisherKey,
                        json: put
                    )
                    #expect(updated.json["lateJoiners"] as? Bool == false, "\(name): \(updated.text)")
                }
                let first = try Self.makeDevices(3, emulator, app)
                try await Self.register(
                    first,
                    server: server,
                    app: app,
                    userID: name == "users" ? "fan-1" : nil,
                    batch: true
                )
                try await Self.start(server, app, event: "match", body)
                let started = emulator.activities(in: .sandbox).filter { $0.bundleID == app.bundleID }.count
                #expect(started == 3, "\(name)")

                let late = try Self.makeDevices(4, emulator, app)
                try await Self.register(Array(late.prefix(2)), server: server, app: app, batch: true)
                try await Self.register(Array(late.suffix(2)), server: server, app: app, batch: false)
                #expect(try await Self.pending(server, app, event: "match") == 0, "\(name)")
                #expect(try await Self.queuedNow(late, server, app) == 0, "\(name)")
                #expect(emulator.activities(in: .sandbox).filter { $0.bundleID == app.bundleID }.count == 3, "\(name)")
            }
        }
    }

    @Test("a start to user IDs cannot turn late joining on", arguments: [TestBackend.sqlite])
    func listAudienceRefused(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "match").status == 201)
            let answer = try await server.client.send(
                "POST",
                "/v1/events/match/starts",
                key: app.publisherKey,
                json: Self.startBody(audience: ["userIDs": ["fan-1"]], lateJoiners: ["enabled": true])
            )
            #expect(answer.status == 422)
            #expect(answer.text.contains("lateJoiners"))
        }
    }
}
