import Foundation

/// The match `marquee demo` tells: the teams, the kick-off the Live Activity starts with, and the
/// moments broadcast after it, the last one the end. Each moment carries the content-state a Lock
/// Screen shows (score, clock, period, the last thing that happened) and, for the moments a fan
/// wants to hear about, an alert (which makes Marquee send it at priority 10).
struct MatchScript: Sendable {
    var eventKey: String
    var title: String
    var competition: String
    var homeTeam: String
    var awayTeam: String
    var kickOff: MatchMoment
    /// Broadcast in order after the start; the last is the end.
    var moments: [MatchMoment]

    /// The ActivityKit attributes every device's activity is started with.
    var attributes: [String: (any Sendable)?] {
        ["homeTeam": homeTeam, "awayTeam": awayTeam, "competition": competition]
    }

    /// What every device should show once the match is over.
    var finalMoment: MatchMoment { moments.last ?? kickOff }

    /// Arsenal v Chelsea: a goal each way, a yellow, half time, a red card, a late winner, full time.
    static let arsenalChelsea = MatchScript(
        eventKey: "ars-che-demo",
        title: "Arsenal v Chelsea",
        competition: "Premier League",
        homeTeam: "Arsenal",
        awayTeam: "Chelsea",
        kickOff: MatchMoment(
            step: "Kick-off",
            minute: 0,
            clock: "0'",
            period: "1st half",
            home: 0,
            away: 0,
            lastEvent: "Kick-off",
            alert: MatchAlert(title: "Kick-off", body: "Arsenal v Chelsea has started")
        ),
        moments: [
            MatchMoment(
                step: "12' goal, Arsenal 1-0",
                minute: 12,
                clock: "12'",
                period: "1st half",
                home: 1,
                away: 0,
                lastEvent: "GOAL Saka 12'",
                alert: MatchAlert(title: "Goal! Arsenal 1-0", body: "Saka finishes low at the near post")
            ),
            MatchMoment(
                step: "27' yellow card, Chelsea",
                minute: 27,
                clock: "27'",
                period: "1st half",
                home: 1,
                away: 0,
                lastEvent: "Yellow card Caicedo 27'"
            ),
            MatchMoment(
                step: "45+2' half time",
                minute: 45,
                clock: "45+2'",
                period: "Half time",
                home: 1,
                away: 0,
                lastEvent: "Yellow card Caicedo 27'",
                alert: MatchAlert(title: "Half time", body: "Arsenal 1-0 Chelsea")
            ),
            MatchMoment(
                step: "58' goal, Chelsea 1-1",
                minute: 58,
                clock: "58'",
                period: "2nd half",
                home: 1,
                away: 1,
                lastEvent: "GOAL Palmer 58'",
                alert: MatchAlert(title: "Goal! Chelsea 1-1", body: "Palmer curls one in from the edge")
            ),
            MatchMoment(
                step: "71' red card, Chelsea",
                minute: 71,
                clock: "71'",
                period: "2nd half",
                home: 1,
                away: 1,
                lastEvent: "Red card James 71'",
                alert: MatchAlert(title: "Red card", body: "James is sent off: Chelsea down to ten")
            ),
            MatchMoment(
                step: "84' goal, Arsenal 2-1",
                minute: 84,
                clock: "84'",
                period: "2nd half",
                home: 2,
                away: 1,
                lastEvent: "GOAL Rice 84'",
                alert: MatchAlert(title: "Goal! Arsenal 2-1", body: "Rice heads in from the corner")
            ),
            MatchMoment(
                step: "90+4' full time (end)",
                minute: 90,
                clock: "90+4'",
                period: "Full time",
                home: 2,
                away: 1,
                lastEvent: "GOAL Rice 84'",
                alert: MatchAlert(title: "Full time", body: "Arsenal 2-1 Chelsea"),
                ends: true
            ),
        ]
    )
}

/// One moment of a match as the Lock Screen shows it.
struct MatchMoment: Sendable, Hashable {
    /// How the demo's step table names it.
    var step: String
    var minute: Int
    /// The clock as fans read it: `45+2'`.
    var clock: String
    var period: String
    var home: Int
    var away: Int
    var lastEvent: String
    var alert: MatchAlert?
    /// Whether this moment ends the Live Activity (an `end` broadcast).
    var ends = false

    /// The ActivityKit content-state: what the app's Lock Screen view reads.
    var contentState: [String: (any Sendable)?] {
        [
            "homeScore": home, "awayScore": away, "minute": minute, "clock": clock, "period": period,
            "lastEvent": lastEvent,
        ]
    }
}

/// An alert that goes with a moment (title and body, as APNs' `alert` object).
struct MatchAlert: Sendable, Hashable {
    var title: String
    var body: String

    var object: [String: (any Sendable)?] { ["title": title, "body": body] }
}
