import Foundation
import MarqueeKit
import Testing

/// The `marquee` object of Marquee's background push, as the app receives it.
@Suite("Background push parser")
struct MarqueeBackgroundPushTests {
    @Test("Marquee's push: the ask and its events, in order, without repeats")
    func parsesMarqueePush() throws {
        let body = Data(
            """
            {"aps": {"content-available": 1},
             "marquee": {"ask": "presence", "events": [
               {"eventKey": "ars-che-2026-11-28", "environment": "production"},
               {"eventKey": "liv-mci:2026", "environment": "sandbox"},
               {"eventKey": "ars-che-2026-11-28", "environment": "production"}]}}
            """.utf8
        )
        let push = try MarqueeBackgroundPush(json: body)
        #expect(push.ask == .presence)
        #expect(
            push.events == [
                .init(eventKey: "ars-che-2026-11-28", environment: .production),
                .init(eventKey: "liv-mci:2026", environment: .sandbox),
            ]
        )
    }

    @Test("userInfo as the app delegate hands it over reads the same")
    func parsesUserInfo() throws {
        let userInfo: [AnyHashable: Any] = [
            "aps": ["content-available": 1],
            "marquee": ["ask": "presence", "events": [["eventKey": "ars-che", "environment": "sandbox"]]],
        ]
        let push = try MarqueeBackgroundPush(userInfo: userInfo)
        #expect(
            push == MarqueeBackgroundPush(ask: .presence, events: [.init(eventKey: "ars-che", environment: .sandbox)])
        )
    }

    @Test("a push without a marquee object is someone else's: notMarquee")
    func notMarquee() {
        #expect(throws: MarqueeBackgroundPushError.notMarquee) {
            try MarqueeBackgroundPush(userInfo: ["aps": ["alert": "Goal!"]])
        }
        #expect(throws: MarqueeBackgroundPushError.notMarquee) {
            try MarqueeBackgroundPush(json: Data(#"{"aps": {"content-available": 1}, "other": {}}"#.utf8))
        }
    }

    @Test(
        "Marquee's push, malformed: the error says what is wrong",
        arguments: [
            (#"{"marquee": 3}"#, "`marquee` is not an object"),
            (#"{"marquee": {"events": []}}"#, "`marquee.ask` is missing or not a string"),
            (#"{"marquee": {"ask": "presence"}}"#, "`marquee.events` is missing or not an array"),
            (#"{"marquee": {"ask": "presence", "events": []}}"#, "`marquee.events` is empty"),
            (#"{"marquee": {"ask": "presence", "events": ["ars-che"]}}"#, "`marquee.events[0]` is not an object"),
            (
                #"{"marquee": {"ask": "presence", "events": [{"eventKey": "a b", "environment": "sandbox"}]}}"#,
                "`marquee.events[0].eventKey` is not an event key (1–200 letters, digits, '.', '_', ':', '-')"
            ),
            (
                #"{"marquee": {"ask": "presence", "events": [{"eventKey": "ars-che"}]}}"#,
                "`marquee.events[0].environment` is not `sandbox` or `production`"
            ),
            (
                #"{"marquee": {"ask": "presence", "events": [{"eventKey": "ars-che", "environment": "development"}]}}"#,
                "`marquee.events[0].environment` is not `sandbox` or `production`"
            ),
            ("[1, 2]", "the push body is not a JSON object"),
            ("{", "the push body is not JSON"),
        ]
    )
    func malformed(body: String, reason: String) {
        #expect(throws: MarqueeBackgroundPushError.malformed(reason)) {
            try MarqueeBackgroundPush(json: Data(body.utf8))
        }
    }

    @Test("more events than one push may ask about is malformed")
    func tooManyEvents() {
        let events = (0...MarqueeBackgroundPush.maxEvents).map { ["eventKey": "e\($0)", "environment": "sandbox"] }
        #expect(throws: MarqueeBackgroundPushError.malformed("`marquee.events` has 65 events, more than 64")) {
            try MarqueeBackgroundPush(userInfo: ["marquee": ["ask": "presence", "events": events]])
        }
    }

    @Test("an ask this MarqueeKit does not know is named, so the app knows to update")
    func unsupportedAsk() {
        #expect(throws: MarqueeBackgroundPushError.unsupportedAsk("census")) {
            try MarqueeBackgroundPush(json: Data(#"{"marquee": {"ask": "census", "events": []}}"#.utf8))
        }
    }
}
