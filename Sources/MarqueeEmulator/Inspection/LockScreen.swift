import MarqueeCore

/// A Live Activity drawn as a Lock Screen would show it, in box-drawing characters: what one
/// virtual device displays, read from the emulator's inspection of it (its attributes, its current
/// content-state and where it is in its life). `marquee demo` prints it, and the service's
/// `GET /v1/emulator/lock-screens` answers it for the web console's device wall, so that both
/// draw the same screen.
public struct LockScreen: Sendable, Hashable {
    /// Above the box: which device this is, how its updates reach it (the channel or its update
    /// token) and when it was drawn.
    public var caption: String
    public var competition: String
    public var homeTeam: String
    public var awayTeam: String
    public var score: String
    /// `Full time 90+4'`.
    public var clock: String
    public var lastEvent: String
    /// `LIVE`, `STALE`, `ENDED`, or `GONE` once dismissed.
    public var status: String

    /// The Lock Screen of `activity` on `device`; nil fields show as blanks, as a view would.
    public init(activity: EmulatedActivity, device: EmulatedDevice?, note: String? = nil) {
        let version = device.map { "iOS \($0.iOSVersion)" } ?? "iOS ?"
        let route = activity.channelID != nil ? "channel" : "update token"
        caption = [version, route, note].compactMap { $0 }.joined(separator: ", ")
        competition = activity.attributes["competition"]?.text ?? ""
        homeTeam = activity.attributes["homeTeam"]?.text ?? "Home"
        awayTeam = activity.attributes["awayTeam"]?.text ?? "Away"
        let state = activity.contentState
        score = "\(state?["homeScore"]?.text ?? "-") - \(state?["awayScore"]?.text ?? "-")"
        clock = [state?["period"]?.text, state?["clock"]?.text].compactMap { $0 }.joined(separator: "  ")
        lastEvent = state?["lastEvent"]?.text ?? ""
        status =
            switch activity.phase {
            case .active: "LIVE"
            case .stale: "STALE"
            case .ended: "ENDED"
            case .dismissed: "GONE"
            }
    }

    /// Characters between the box's side walls.
    public static let innerWidth = 32
    private static let scoreWidth = 7

    /// The caption and the box, one string per line, each `innerWidth + 2` characters wide.
    public var lines: [String] {
        let width = Self.innerWidth
        func row(_ text: String) -> String { "│" + Self.fit(text, width) + "│" }
        let header = Self.fit(" " + competition.uppercased(), width - status.count - 1) + status + " "
        let homeWidth = (width - Self.scoreWidth) / 2
        let awayWidth = width - Self.scoreWidth - homeWidth - 1
        let teams =
            Self.fit(" " + homeTeam, homeWidth) + Self.centered(score, Self.scoreWidth)
            + Self.fit(awayTeam, awayWidth, alignRight: true) + " "
        return [
            Self.fit(caption, width + 2),
            "╭" + String(repeating: "─", count: width) + "╮",
            "│" + header + "│",
            row(""),
            "│" + teams + "│",
            row(Self.centered(clock, width)),
            row(""),
            row(" " + lastEvent),
            "╰" + String(repeating: "─", count: width) + "╯",
        ]
    }

    /// Lock Screens side by side, `perRow` to a row, rows apart by a blank line.
    public static func drawn(_ screens: [LockScreen], perRow: Int = 2) -> String {
        stride(from: 0, to: screens.count, by: max(perRow, 1)).map { start in
            let row = screens[start..<min(start + perRow, screens.count)].map(\.lines)
            let height = row.map(\.count).max() ?? 0
            return (0..<height).map { line in
                row.map { line < $0.count ? $0[line] : String(repeating: " ", count: innerWidth + 2) }
                    .joined(separator: "   ")
                    .trimmingTrailingSpaces()
            }
            .joined(separator: "\n")
        }
        .joined(separator: "\n\n")
    }

    /// `text` cut or padded to exactly `width` characters.
    private static func fit(_ text: String, _ width: Int, alignRight: Bool = false) -> String {
        guard width > 0 else { return "" }
        if text.count > width { return String(text.prefix(width - 1)) + "…" }
        let padding = String(repeating: " ", count: width - text.count)
        return alignRight ? padding + text : text + padding
    }

    private static func centered(_ text: String, _ width: Int) -> String {
        guard text.count < width else { return fit(text, width) }
        let left = (width - text.count) / 2
        return fit(String(repeating: " ", count: left) + text, width)
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}
