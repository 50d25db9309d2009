import MarqueeCore
import MarqueeEmulator

/// Every virtual device's final state, counted by iOS version and by what its Lock Screen
/// displays, against what the match says every one of them should show at the end.
struct DeviceCensus: Sendable {
    /// The devices of one iOS version.
    struct VersionRow: Sendable, Hashable {
        var version: IOSVersion
        var devices: Int
        /// How their updates reached them: `the channel`, `update tokens`, or both.
        var routes: [String]
        /// Those showing the expected final state.
        var showingExpected: Int
    }

    /// One device that does not show what it should.
    struct Mismatch: Sendable, Hashable {
        var deviceID: String
        var version: IOSVersion
        var display: String
    }

    var total: Int
    var byVersion: [VersionRow]
    /// What the Lock Screens display, most common first, with how many show it.
    var byDisplay: [(display: String, devices: Int)]
    var mismatches: [Mismatch]
    /// What every device should display.
    var expectedDisplay: String

    var everyDeviceShowsExpected: Bool { total > 0 && mismatches.isEmpty }

    /// Counts `devices` by the newest Live Activity of `attributesType` each shows.
    init(devices: [EmulatedDevice], activities: [EmulatedActivity], expected: MatchMoment, script: MatchScript) {
        var newest: [String: EmulatedActivity] = [:]
        for activity in activities where activity.attributesType == MatchDemo.attributesType {
            if let known = newest[activity.deviceID], known.startedAt > activity.startedAt { continue }
            newest[activity.deviceID] = activity
        }
        expectedDisplay = Self.display(
            phase: .ended,
            home: "\(expected.home)",
            away: "\(expected.away)",
            moment: (expected.period, expected.clock),
            script: script
        )
        var rows: [IOSVersion: VersionRow] = [:]
        var displays: [String: Int] = [:]
        var mismatches: [Mismatch] = []
        for device in devices {
            let activity = newest[device.id]
            let display = activity.map { Self.display(of: $0, script: script) } ?? "no Live Activity"
            let shows = activity.map { Self.shows(expected, on: $0) } ?? false
            var row =
                rows[device.iOSVersion]
                ?? VersionRow(version: device.iOSVersion, devices: 0, routes: [], showingExpected: 0)
            row.devices += 1
            if shows { row.showingExpected += 1 }
            if let activity {
                let route = activity.channelID != nil ? "the channel" : "an update token"
                if !row.routes.contains(route) { row.routes.append(route) }
            }
            rows[device.iOSVersion] = row
            displays[display, default: 0] += 1
            if !shows { mismatches.append(Mismatch(deviceID: device.id, version: device.iOSVersion, display: display)) }
        }
        total = devices.count
        byVersion = rows.values.sorted { $0.version < $1.version }
        byDisplay = displays.map { (display: $0.key, devices: $0.value) }.sorted {
            ($1.devices, $0.display) < ($0.devices, $1.display)
        }
        self.mismatches = mismatches
    }

    /// Whether the activity ended showing exactly the moment's content-state.
    static func shows(_ moment: MatchMoment, on activity: EmulatedActivity) -> Bool {
        guard activity.phase == .ended, let state = activity.contentState else { return false }
        return moment.contentState.allSatisfy { key, value in
            state[key]?.text == value.map { "\($0)" }
        }
    }

    /// One line for what a Lock Screen displays: `ENDED  Arsenal 2 - 1 Chelsea  Full time 90+4'`.
    static func display(of activity: EmulatedActivity, script: MatchScript) -> String {
        let state = activity.contentState
        return display(
            phase: activity.phase,
            home: state?["homeScore"]?.text ?? "-",
            away: state?["awayScore"]?.text ?? "-",
            moment: (state?["period"]?.text ?? "", state?["clock"]?.text ?? ""),
            script: script
        )
    }

    private static func display(
        phase: ActivityPhase,
        home: String,
        away: String,
        moment: (period: String, clock: String),
        script: MatchScript
    ) -> String {
        """
        \(phase.rawValue.uppercased())  \(script.homeTeam) \(home) - \(away) \(script.awayTeam)  \(moment.period) \
        \(moment.clock)
        """
    }

    /// The census for people: by iOS version, by display, and the verdict (with the first
    /// mismatches when there are any).
    var text: String {
        var versions = Table("ios", "devices", "updated through", "showing the final state")
        for row in byVersion {
            versions.append(
                row.version.description,
                Formatting.count(row.devices),
                row.routes.isEmpty ? "-" : row.routes.joined(separator: " + "),
                Formatting.count(row.showingExpected)
            )
        }
        var shown = Table("devices", "lock screen displays")
        for entry in byDisplay { shown.append(Formatting.count(entry.devices), entry.display) }
        var lines = [versions.text, "", shown.text, ""]
        if everyDeviceShowsExpected {
            lines.append("All \(Formatting.count(total)) devices ended showing the final score: \(expectedDisplay).")
        } else {
            lines.append(
                """
                \(Formatting.count(mismatches.count)) of \(Formatting.count(total)) devices do not show \
                \(expectedDisplay):
                """
            )
            for mismatch in mismatches.prefix(10) {
                lines.append("  \(mismatch.deviceID) (iOS \(mismatch.version)): \(mismatch.display)")
            }
            if mismatches.count > 10 { lines.append("  … and \(Formatting.count(mismatches.count - 10)) more") }
        }
        return lines.joined(separator: "\n")
    }
}
