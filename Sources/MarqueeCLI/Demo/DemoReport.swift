import Foundation
import MarqueeCore
import MarqueeEmulator

/// What `marquee demo` prints: the heading, a line per step as it completes, then the Lock
/// Screens and the census, as text for people or as one JSON object for programs.
struct DemoReport: Sendable {
    var script: MatchScript
    var deviceCount: Int

    private static let nameWidth = 34
    private static let timeWidth = 9

    var heading: String {
        "\(script.title), told to \(Formatting.count(deviceCount)) virtual iPhones on iOS 17.2, 17.4 and 18 "
            + "(the service and its APNs emulator in this process; nothing reaches Apple)."
    }

    static var stepHeader: String {
        "STEP".padding(toLength: nameWidth, withPad: " ", startingAt: 0)
            + "TIME".padding(toLength: timeWidth, withPad: " ", startingAt: 0)
            + "WHAT HAPPENED"
    }

    /// One step's line, in the columns of `stepHeader`.
    static func line(_ step: StepTimer.Step) -> String {
        let time = seconds(step.seconds)
        return step.name.padding(toLength: max(nameWidth, step.name.count + 2), withPad: " ", startingAt: 0)
            + time.padding(toLength: max(timeWidth, time.count + 2), withPad: " ", startingAt: 0) + step.detail
    }

    /// `0.042 s`, `1.83 s`, `12.4 s`.
    static func seconds(_ value: Double) -> String {
        switch value {
        case ..<1: String(format: "%.3f s", value)
        case ..<10: String(format: "%.2f s", value)
        default: String(format: "%.1f s", value)
        }
    }

    func text(_ outcome: MatchDemo.Outcome, total: Duration) -> String {
        [
            "",
            "Told in \(Self.seconds(total.timeInterval)).",
            "",
            "What the devices display:",
            "",
            LockScreen.drawn(outcome.lockScreens),
            "",
            "Every device's final state (\(Formatting.count(outcome.census.total)) devices):",
            "",
            outcome.census.text,
        ]
        .joined(separator: "\n")
    }

    func json(_ outcome: MatchDemo.Outcome, total: Duration) -> [String: Any] {
        let census = outcome.census
        return [
            "match": script.title,
            "devices": deviceCount,
            "seconds": total.timeInterval,
            "steps": outcome.steps.map { ["step": $0.name, "detail": $0.detail, "seconds": $0.seconds] },
            "lockScreens": outcome.lockScreens.map { ["caption": $0.caption, "lines": Array($0.lines.dropFirst())] },
            "finalState": [
                "expected": census.expectedDisplay,
                "everyDeviceShowsIt": census.everyDeviceShowsExpected,
                "byVersion": census.byVersion.map {
                    [
                        "iosVersion": $0.version.description, "devices": $0.devices, "updatedThrough": $0.routes,
                        "showingFinalState": $0.showingExpected,
                    ] as [String: Any]
                },
                "byDisplay": census.byDisplay.map { ["display": $0.display, "devices": $0.devices] as [String: Any] },
                "mismatches": census.mismatches.map {
                    ["deviceID": $0.deviceID, "iosVersion": $0.version.description, "display": $0.display]
                },
            ] as [String: Any],
        ]
    }

    /// What `--console` prints once the match is told: where the console is and how to sign in.
    static func consoleInvitation(baseURL: String, publisherKey: String) -> String {
        """

        The service stays up for its web console (Ctrl-C stops it and removes its folder):
          open      \(baseURL)/console
          sign in   \(publisherKey)   (the demo app's publisher key)
          then      Devices: every virtual iPhone's Lock Screen, as drawn above
        """
    }
}
