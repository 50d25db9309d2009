import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// What the scheduling tests share: devices, times as the API writes them, and waiting for the
/// worker (never a fixed sleep: a deadline for it to act).
extension TestServer {
    /// `count` iOS 18 devices with the app, and their push-to-start tokens registered with Marquee.
    func registerDevices(_ count: Int, app: TestApp, emulator: APNSEmulator) async throws -> [EmulatedDevice] {
        var devices: [EmulatedDevice] = []
        for _ in 0..<count {
            devices.append(
                try emulator.registerDevice(
                    environment: .sandbox,
                    bundleID: app.bundleID,
                    pushToStartAttributesTypes: ["MatchAttributes"]
                )
            )
        }
        let tokens = devices.map { device -> [String: Any] in
            [
                "token": device.pushToStartTokens["MatchAttributes"] ?? "", "environment": "sandbox",
                "attributesType": "MatchAttributes",
                "iosVersion": "18.0", "tags": ["arsenal"],
            ]
        }
        let registered = try await client.send(
            "POST",
            "/v1/push-to-start-tokens/batch",
            key: app.appKey,
            json: ["tokens": tokens]
        )
        guard registered.status == 200 else {
            throw TestSetupError("registering tokens answered \(registered.status): \(registered.text)")
        }
        return devices
    }

    /// Moves the clock and wakes the worker, as time passing would.
    func advance(_ clock: ManualWallClock, to date: Date) {
        clock.set(to: date)
        engine.wakeup.signal()
    }

    /// Reads `path` until `done` holds for its JSON, waking the worker meanwhile.
    @discardableResult
    func waitFor(
        _ path: String,
        key: String,
        _ what: String,
        until done: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        try await poll(path, key: key, what, meanwhile: { engine.wakeup.signal() }, until: done)
    }

    /// Waits until the schedule at `location` is in one of `states`.
    @discardableResult
    func waitForSchedule(
        _ location: String,
        _ app: TestApp,
        states: Set<String> = ["succeeded", "failed", "skipped"]
    ) async throws
        -> [String: Any]
    {
        try await waitFor(location, key: app.publisherKey, "the schedule reaching \(states.sorted())") {
            states.contains($0["state"] as? String ?? "")
        }
    }

    /// The event's schedules, by due time.
    func schedules(of eventKey: String, _ app: TestApp) async throws -> [[String: Any]] {
        try await client.send("GET", "/v1/events/\(eventKey)/schedules", key: app.publisherKey).json["schedules"]
            as? [[String: Any]] ?? []
    }
}

/// RFC 3339, as the API writes times.
func rfc3339(_ date: Date) -> String {
    ISO8601DateFormatter().string(from: date)
}
