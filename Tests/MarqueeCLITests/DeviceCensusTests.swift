import Foundation
import MarqueeEmulator
import Testing

@testable import MarqueeCLI

/// The demo's verdict on what the devices display, and its Lock Screens, from inspection
/// snapshots made here: a device that missed the end, or never started, is named.
@Suite("demo census and Lock Screens")
struct DeviceCensusTests {
    static let script = MatchScript.arsenalChelsea

    static func device(_ id: String, _ version: String, activityIDs: [String]) throws -> EmulatedDevice {
        let json: [String: Any] = [
            "id": id, "environment": "sandbox", "bundleID": "com.example.demo", "iOSVersion": version,
            "deviceToken": "00",
            "pushToStartTokens": ["MatchAttributes": "11"], "isAppInstalled": true, "isOnline": true,
            "activityIDs": activityIDs,
        ]
        return try JSONDecoder().decode(EmulatedDevice.self, from: JSONSerialization.data(withJSONObject: json))
    }

    static func activity(
        _ id: String,
        device: String,
        phase: String,
        moment: MatchMoment,
        channel: String? = nil
    ) throws -> EmulatedActivity {
        var json: [String: Any] = [
            "id": id, "deviceID": device, "environment": "sandbox", "bundleID": "com.example.demo",
            "attributesType": "MatchAttributes",
            "attributes": script.attributes.compactMapValues { $0 },
            "contentState": moment.contentState.compactMapValues { $0 },
            "phase": phase, "startedAt": 0, "updatesApplied": 1, "updatesIgnored": 0,
        ]
        json["channelID"] = channel
        return try JSONDecoder().decode(EmulatedActivity.self, from: JSONSerialization.data(withJSONObject: json))
    }

    @Test("a device still showing 1-1 and one with no activity are mismatches, counted by version and by display")
    func mismatches() throws {
        let final = Self.script.finalMoment
        let equaliser = try #require(Self.script.moments.first { $0.home == 1 && $0.away == 1 })
        let devices = [
            try Self.device("dev-a", "18.0", activityIDs: ["act-a"]),
            try Self.device("dev-b", "17.4", activityIDs: ["act-b"]),
            try Self.device("dev-c", "17.2", activityIDs: []),
        ]
        let activities = [
            try Self.activity("act-a", device: "dev-a", phase: "ended", moment: final, channel: "chan"),
            try Self.activity("act-b", device: "dev-b", phase: "active", moment: equaliser),
        ]
        let census = DeviceCensus(devices: devices, activities: activities, expected: final, script: Self.script)
        #expect(!census.everyDeviceShowsExpected)
        #expect(census.mismatches.map(\.deviceID) == ["dev-b", "dev-c"])
        #expect(census.byVersion.map(\.showingExpected) == [0, 0, 1])
        #expect(census.byVersion.map(\.routes) == [[], ["an update token"], ["the channel"]])
        #expect(
            census.text.contains("2 of 3 devices do not show ENDED  Arsenal 2 - 1 Chelsea  Full time 90+4':"),
            "\(census.text)"
        )
        #expect(census.text.contains("dev-b (iOS 17.4): ACTIVE  Arsenal 1 - 1 Chelsea  2nd half 58'"), "\(census.text)")
        #expect(census.text.contains("dev-c (iOS 17.2): no Live Activity"), "\(census.text)")
    }

    @Test("a Lock Screen is a box of even width, cut where a name is too long")
    func lockScreen() throws {
        var moment = Self.script.finalMoment
        moment.lastEvent = String(repeating: "Very long last event ", count: 4)
        let activity = try Self.activity("act-a", device: "dev-a", phase: "ended", moment: moment, channel: "chan")
        let screen = LockScreen(
            activity: activity,
            device: try Self.device("dev-a", "18.0", activityIDs: ["act-a"]),
            note: "full time"
        )
        #expect(screen.caption == "iOS 18.0, channel, full time")
        #expect(Set(screen.lines.map(\.count)) == [LockScreen.innerWidth + 2])
        #expect(screen.lines.contains { $0.hasPrefix("│ Very long last event") && $0.hasSuffix("…│") })
        let drawn = LockScreen.drawn([screen, screen, screen])
        #expect(drawn.split(separator: "\n", omittingEmptySubsequences: false).count == screen.lines.count * 2 + 1)
    }
}
