import Foundation
import MarqueeTesting
import Testing

/// `marquee events` and `marquee channels`, as a producer uses them with a publisher key.
@Suite("marquee events and channels")
struct EventsCommandTests {
    static let event = [
        "--title", "Arsenal v Chelsea", "--attributes-type", "MatchAttributes", "--environment", "sandbox",
        "--planned-start", "2026-11-28T15:00:00Z", "--planned-end", "2026-11-28T17:00:00Z",
    ]

    @Test(
        "a producer puts an event, reads its channel IDs, checks the quota, reconciles, closes and deletes it",
        arguments: TestBackend.allCases
    )
    func eventLifecycle(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let marquee = server.cli(key: app.publisherKey)

            let created = await marquee.run(["events", "put", "ars-che"] + Self.event)
            #expect(created.code == 0, "\(created)")
            #expect(created.standardOutput.hasPrefix("Created event ars-che"))
            let again = await marquee.run(["events", "put", "ars-che"] + Self.event + ["--environment", "production"])
            #expect(again.code == 0, "\(again)")
            #expect(again.standardOutput.hasPrefix("Updated event ars-che"))

            let listed = await marquee("events", "list", "--state", "scheduled")
            #expect(listed.code == 0, "\(listed)")
            #expect(listed.standardOutput.contains("ars-che") && listed.standardOutput.contains("Arsenal v Chelsea"))

            // --json is the server's own document.
            let shown = await marquee("events", "show", "ars-che", "--json")
            let direct = try await server.client.send("GET", "/v1/events/ars-che", key: app.publisherKey)
            #expect(NSDictionary(dictionary: shown.json) == NSDictionary(dictionary: direct.json))
            let channels = try #require(shown.json["channels"] as? [[String: Any]])
            // As text, with its delivery funnel per environment (nothing started yet).
            let text = await marquee("events", "show", "ars-che")
            #expect(text.code == 0, "\(text)")
            #expect(text.standardOutput.contains("LATE JOINERS STARTED"), "\(text.standardOutput)")
            let sandboxRow = text.standardOutput.split(separator: "\n").first {
                $0.hasPrefix("sandbox") && $0.contains(" 0 ")
            }
            #expect(sandboxRow != nil, "\(text.standardOutput)")
            let sandboxChannelID = try #require(
                channels.first { $0["environment"] as? String == "sandbox" }?["channelID"] as? String
            )

            // The channel IDs per environment, as the app's key reads them.
            let asApp = server.cli(key: app.appKey)
            let ids = await asApp("channels", "show", "ars-che")
            #expect(ids.code == 0, "\(ids)")
            #expect(ids.standardOutput.contains(sandboxChannelID))
            #expect(ids.standardOutput.contains("production"))
            let one = await asApp("channels", "show", "ars-che", "--environment", "sandbox", "--json")
            #expect(one.json["channelID"] as? String == sandboxChannelID)

            let all = await marquee("channels", "list", "--environment", "sandbox")
            #expect(all.code == 0 && all.standardOutput.contains(sandboxChannelID), "\(all)")
            let quota = await marquee("channels", "quota", "--json")
            let quotas = try #require(quota.json["quotas"] as? [[String: Any]])
            #expect(quotas.first { $0["environment"] as? String == "sandbox" }?["used"] as? Int == 1)
            let reconciled = await marquee("channels", "reconcile", "--environment", "sandbox")
            #expect(reconciled.code == 0, "\(reconciled)")
            #expect(reconciled.standardOutput.contains("Unchanged"))

            let closed = await marquee("events", "close", "ars-che", "--json")
            #expect(closed.code == 0, "\(closed)")
            #expect(closed.json["state"] as? String == "ended")
            let deleted = await marquee("events", "delete", "ars-che")
            #expect(deleted.code == 0, "\(deleted)")
            #expect(await marquee("events", "show", "ars-che").code == 4)
        }
    }

    @Test(
        "a broadcast reaches the event's channel; one to an ended event is refused with exit code 5",
        arguments: TestBackend.allCases
    )
    func broadcast(backend: TestBackend) async throws {
        try await TestServer.run(backend) { server in
            let app = try await server.makeApp()
            let marquee = server.cli(key: app.publisherKey)
            #expect(await marquee.run(["events", "put", "ars-che"] + Self.event).code == 0)

            let update = await marquee(
                "broadcast",
                "ars-che",
                "--event-type",
                "update",
                "--content-state",
                #"{"homeScore":1,"awayScore":0,"minute":23}"#,
                "--alert-title",
                "Goal!",
                "--alert-body",
                "Saka scores"
            )
            #expect(update.code == 0, "\(update)")
            #expect(update.standardOutput.contains("sandbox") && update.standardOutput.contains("accepted"))
            #expect(update.standardOutput.contains("10"), "an alert asks for priority 10")

            let state = try temporaryFile("final.json", contents: #"{"homeScore":2,"awayScore":1,"minute":90}"#)
            let end = await marquee(
                "broadcast",
                "ars-che",
                "--event-type",
                "end",
                "--content-state",
                "@\(state.path)",
                "--json"
            )
            #expect(end.code == 0, "\(end)")
            let results = try #require(end.json["results"] as? [[String: Any]])
            #expect(results.first?["status"] as? String == "accepted")

            #expect(await marquee("events", "close", "ars-che").code == 0)
            let late = await marquee(
                "broadcast",
                "ars-che",
                "--event-type",
                "update",
                "--content-state",
                #"{"homeScore":3}"#
            )
            #expect(late.code == 5, "\(late)")
            #expect(late.standardError.hasPrefix("error: "))
            #expect(late.standardError.contains("request id: "))
        }
    }
}
