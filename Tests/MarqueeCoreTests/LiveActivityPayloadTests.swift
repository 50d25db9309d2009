import Foundation
import MarqueeCore
import Testing

@Suite("Live Activity payloads")
struct LiveActivityPayloadTests {
    let kickoff = Date(timeIntervalSince1970: 1_767_225_600)

    @Test("a start push carries the alert, attributes, content state and a channel subscription, times in seconds")
    func startWithChannel() throws {
        let payload = LiveActivityPayload.start(
            .init(
                attributesType: "MatchAttributes",
                attributes: ["homeTeam": "Home FC", "awayTeam": "Away FC"],
                updates: .channel("dHN0LXNyY2gtY2hubA==")
            ),
            contentState: ["homeTeamScore": 0, "awayTeamScore": 0],
            alert: LiveActivityAlert(
                title: .localized(key: "%@ vs %@ has started", arguments: ["Home FC", "Away FC"]),
                body: "Follow the match live",
                sound: "default"
            ),
            timestamp: kickoff,
            staleDate: kickoff.addingTimeInterval(3600),
            relevanceScore: 75
        )
        let json = String(decoding: try payload.encodedForDevice(), as: UTF8.self)
        // One line of JSON, wrapped here with continuations (`\#` joins the lines without a break).
        let expected = #"""
            {"aps":{"timestamp":1767225600,"event":"start","attributes-type":"MatchAttributes",\#
            "attributes":{"homeTeam":"Home FC","awayTeam":"Away FC"},"content-state":{"homeTeamScore":0,\#
            "awayTeamScore":0},"input-push-channel":"dHN0LXNyY2gtY2hubA==","stale-date":1767229200,\#
            "relevance-score":75.0,"alert":{"title":{"loc-key":"%@ vs %@ has started","loc-args":["Home FC","Away \#
            FC"]},\#
            "body":"Follow the match live","sound":"default"}}}
            """#
        #expect(json == expected)
    }

    @Test("a start push can ask for an update token instead, and never carries both keys")
    func startWithUpdateToken() {
        let payload = LiveActivityPayload.start(
            .init(attributesType: "A", attributes: [:], updates: .updateToken),
            contentState: [:],
            alert: LiveActivityAlert(title: "t", body: "b"),
            timestamp: kickoff
        )
        let aps = JSONValue.object(payload.jsonObject)["aps"]
        #expect(aps?["input-push-token"] == 1)
        #expect(aps?["input-push-channel"] == nil)
    }

    @Test("content state keys and numbers pass through unchanged")
    func contentStatePassesThrough() {
        let state: JSONObject = ["snake_case_key": 1, "camelCaseKey": 2.5, "nested": ["Mixed-Key": [1, "two"]]]
        let payload = LiveActivityPayload.update(contentState: state, timestamp: kickoff)
        #expect(
            payload.jsonObject.jsonBytes
                == Array(
                    #"""
                    {"aps":{"timestamp":1767225600,"event":"update","content-state":{"snake_case_key":1,\#
                    "camelCaseKey":2.5,"nested":{"Mixed-Key":[1,"two"]}}}}
                    """#
                    .utf8
                )
        )
    }

    @Test("an end push carries the dismissal date in seconds")
    func end() {
        let payload = LiveActivityPayload.end(
            contentState: ["score": "3-1"],
            timestamp: kickoff,
            dismissalDate: kickoff.addingTimeInterval(3600.9)
        )
        #expect(
            payload.jsonObject.jsonBytes
                == Array(
                    #"""
                    {"aps":{"timestamp":1767225600,"event":"end","content-state":{"score":"3-1"},\#
                    "dismissal-date":1767229200}}
                    """#
                    .utf8
                )
        )
    }

    @Test("the size is checked against 4096 bytes for devices and 5120 for broadcasts, naming both numbers")
    func sizeLimits() throws {
        let filler = String(repeating: "x", count: 4_500)
        let payload = LiveActivityPayload.update(contentState: ["text": .string(filler)], timestamp: kickoff)
        let size = payload.jsonObject.jsonBytes.count
        #expect(throws: LiveActivityPayloadError.tooLarge(size: size, limit: 4096)) {
            try payload.encodedForDevice()
        }
        #expect(try payload.encodedForBroadcast().count == size)
        #expect(LiveActivityPayloadError.tooLarge(size: size, limit: 4096).description.contains("\(size)"))
        #expect(LiveActivityPayloadError.tooLarge(size: size, limit: 4096).description.contains("4096"))
    }
}
