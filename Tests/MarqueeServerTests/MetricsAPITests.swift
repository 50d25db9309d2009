import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeEngine
import MarqueeTesting
import Testing

/// `GET /metrics` of a server under test, over real HTTP: what a broadcast and a start fan-out
/// leave there, that routes are counted by their template, never their path, and who may read it.
/// Each server has its own registry, so these tests run beside the others without interference.
@Suite("Metrics")
struct MetricsAPITests {
    @Test(
        """
        after a broadcast and a start fan-out: pushes by kind and outcome, latencies, connections, job progress, \
        channels and requests by route
        """,
        arguments: TestBackend.allCases
    )
    func broadcastAndStart(backend: TestBackend) async throws {
        try await TestServer.run(backend, settings: StartFanOutAPITests.patientRetries) { server in
            let emulator = try server.emulator
            let app = try await server.makeApp()
            #expect(try await server.putEvent(app, key: "ars-che-metrics").status == 201)
            let devices = try await StartFanOutAPITests.devices(30, emulator: emulator, server: server, app: app)

            let broadcast = try await server.client.send(
                "POST",
                "/v1/events/ars-che-metrics/broadcasts",
                key: app.publisherKey,
                json: ["event": "update", "contentState": ["homeScore": 1, "awayScore": 0]]
            )
            #expect(broadcast.status == 200, "\(broadcast.text)")

            // The fan-out held after 10 starts: a job in flight, seen from /metrics.
            StartFanOutAPITests.holdBack(after: 10, emulator)
            let started = try await server.client.send(
                "POST",
                "/v1/events/ars-che-metrics/starts",
                key: app.publisherKey,
                json: StartFanOutAPITests.startBody
            )
            let location = try #require(started.header("Location"))
            let jobID = try #require(location.split(separator: "/").last.map(String.init))
            try await StartFanOutAPITests.waitForJob(server, app, location) {
                (StartFanOutAPITests.progress($0, "accepted") ?? 0) >= 10
            }
            let midway = try await server.scrapeMetrics()
            #expect(midway.value("marquee_jobs_running") == 1)
            let remaining = try #require(midway.value("marquee_job_remaining_tokens", ["job": jobID]), "\(midway.text)")
            #expect(remaining > 0 && remaining <= 30)

            // The held-back starts are answered 429 until the client gives them up as final: wait for
            // one (the first 10 are committed within the commit interval, long before that).
            var held = midway
            for _ in 0..<1500
            where
                (held.value(
                    "marquee_apns_pushes_total",
                    ["kind": "start", "outcome": "rejected", "reason": "TooManyRequests"]
                ) ?? 0) == 0
            {
                try await Task.sleep(for: .milliseconds(20))
                held = try await server.scrapeMetrics()
            }
            emulator.removeAllFaults()
            let job = try await StartFanOutAPITests.waitForJob(server, app, location)
            #expect(job["state"] as? String == "succeeded")
            // The run's series goes once the run has returned, a moment after the job's last
            // commit: wait for it (this is not a time limit on the server).
            var metrics = try await server.scrapeMetrics()
            try await waitUntil("the finished run's remaining-tokens series going") {
                metrics = try await server.scrapeMetrics()
                return metrics.value("marquee_job_remaining_tokens", ["job": jobID]) == nil
            }
            #expect(metrics.value("marquee_job_remaining_tokens", ["job": jobID]) == nil)
            #expect(metrics.value("marquee_jobs_running") == 0)

            // APNs: one broadcast and 30 starts accepted; the held-back ones were retried, not counted
            // as outcomes until they were final.
            #expect(
                metrics.value(
                    "marquee_apns_pushes_total",
                    ["kind": "broadcast", "outcome": "accepted", "reason": "none"]
                ) == 1
            )
            #expect(
                metrics.value("marquee_apns_pushes_total", ["kind": "start", "outcome": "accepted", "reason": "none"])
                    == 30
            )
            let tooMany =
                metrics.value(
                    "marquee_apns_pushes_total",
                    ["kind": "start", "outcome": "rejected", "reason": "TooManyRequests"]
                ) ?? 0
            #expect(tooMany > 0, "the 429s of the held-back starts are APNs rejections with their reason")
            #expect(metrics.declares("marquee_apns_pushes_total", as: "counter"))
            #expect(metrics.declares("marquee_apns_request_duration_seconds", as: "histogram"))
            let startAttempts = try #require(
                metrics.value("marquee_apns_request_duration_seconds_count", ["kind": "start"])
            )
            #expect(startAttempts >= 30 + tooMany)
            #expect(metrics.value("marquee_apns_request_duration_seconds_count", ["kind": "broadcast"]) == 1)
            #expect((metrics.value("marquee_apns_request_duration_seconds_sum", ["kind": "broadcast"]) ?? 0) > 0)
            #expect((metrics.value("marquee_apns_connections", ["environment": "sandbox"]) ?? 0) >= 1)
            #expect(metrics.value("marquee_apns_streams_in_flight", ["environment": "sandbox"]) == 0)
            // Per connection: its streams in flight after each batch written to it, and its limit then.
            for histogram in ["marquee_apns_connection_streams_in_flight", "marquee_apns_connection_concurrency_limit"]
            {
                #expect(metrics.declares(histogram, as: "histogram"))
                #expect((metrics.value(histogram + "_count", ["environment": "sandbox"]) ?? 0) >= 1, "\(histogram)")
            }

            // The broadcast, end to end; the job's tokens by outcome.
            #expect(metrics.value("marquee_broadcast_latency_seconds_count") == 1)
            #expect(metrics.declares("marquee_broadcast_latency_seconds", as: "histogram"))
            #expect(metrics.value("marquee_job_tokens_total", ["kind": "start", "outcome": "accepted"]) == 30)
            #expect(metrics.series("marquee_job_tokens_total", matching: ["outcome": "failed"]).isEmpty)

            // The event's channel against the cap (10,000 by default), per app (its bundle ID).
            #expect(metrics.value("marquee_channels", ["app": app.bundleID, "environment": "sandbox"]) == 1)
            #expect(
                metrics.value("marquee_channel_quota_ratio", ["app": app.bundleID, "environment": "sandbox"]) == 0.0001
            )

            // Events by state, counted each janitor sweep: the started event is live; its funnel,
            // counted by the funnel reporter at its own pace.
            try await server.engine.janitor.sweep()
            try await server.engine.funnelReporter.report()
            let counted = try await server.scrapeMetrics()
            #expect(counted.declares("marquee_events", as: "gauge"))
            #expect(counted.value("marquee_events", ["app": app.bundleID, "state": "live"]) == 1)
            #expect(counted.value("marquee_events", ["app": app.bundleID, "state": "scheduled"]) == 0)
            // The live event's funnel, per environment and stage, 0 included.
            #expect(counted.declares("marquee_event_funnel", as: "gauge"))
            let funnel = ["app": app.bundleID, "environment": "sandbox"]
            #expect(counted.value("marquee_event_funnel", funnel.merging(["stage": "accepted"]) { $1 }) == 30)
            #expect(counted.value("marquee_event_funnel", funnel.merging(["stage": "sent"]) { $1 }) == 30)
            #expect(
                counted.value("marquee_event_funnel", funnel.merging(["stage": "late_joiners_started"]) { $1 }) == 0
            )
            #expect(counted.value("marquee_event_funnel", funnel.merging(["stage": "confirmed_showing"]) { $1 }) == 0)

            // The API by route template.
            let broadcasts = ["method": "POST", "route": "/v1/events/{eventKey}/broadcasts"]
            #expect(metrics.value("marquee_http_requests_total", broadcasts.merging(["status": "200"]) { $1 }) == 1)
            #expect(metrics.value("marquee_http_request_duration_seconds_count", broadcasts) == 1)
            // Durations in buckets fine enough for the request path's targets (a broadcast's p99
            // under 5 ms), from a quarter of a millisecond: swift-prometheus' default begins at 5 ms.
            let bounds = { (histogram: String, labels: [String: String]) in
                Set(
                    metrics.series(histogram + "_bucket", matching: labels).compactMap {
                        $0.labels["le"].flatMap(Double.init)
                    }
                )
            }
            let targets: Set<Double> = [0.00025, 0.001, 0.002, 0.005, 0.01, 0.025]
            #expect(bounds("marquee_broadcast_latency_seconds", [:]).isSuperset(of: targets))
            #expect(bounds("marquee_http_request_duration_seconds", broadcasts).isSuperset(of: targets))
            #expect(bounds("marquee_apns_request_duration_seconds", ["kind": "broadcast"]).isSuperset(of: targets))
            #expect(
                metrics.value(
                    "marquee_http_requests_total",
                    ["method": "PUT", "route": "/v1/events/{eventKey}", "status": "201"]
                ) == 1
            )
            #expect(
                metrics.value(
                    "marquee_http_requests_total",
                    ["method": "POST", "route": "/v1/events/{eventKey}/starts", "status": "202"]
                ) == 1
            )
            #expect(
                (metrics.value(
                    "marquee_http_requests_total",
                    ["method": "GET", "route": "/v1/jobs/{jobID}", "status": "200"]
                ) ?? 0) >= 2
            )

            // No secrets, tokens, keys or IDs but the job's.
            let forbidden =
                [app.id, app.adminKey, app.publisherKey, app.appKey, server.deploymentKey, "ars-che-metrics"]
                + devices.compactMap { $0.pushToStartTokens["MatchAttributes"] }
                + emulator.channels(in: .sandbox).map(\.id)
            for text in forbidden {
                #expect(!metrics.textWithoutValues.contains(text), "/metrics shows \(text)")
            }
        }
    }

    @Test(
        """
        a request no route matches is counted under `unmatched`, a 404 of a route under its template; no path \
        reaches a label
        """
    )
    func routeTemplates() async throws {
        try await TestServer.run(.sqlite) { server in
            let app = try await server.makeApp()
            #expect(
                try await server.client.send("GET", "/v1/events/no-such-event", key: app.publisherKey).status == 404
            )
            #expect(
                try await server.client.send("GET", "/v1/events/no-such-event", key: app.publisherKey).status == 404
            )
            #expect(try await server.client.send("GET", "/definitely/not/a/route/4711").status == 404)
            #expect(try await server.client.send("GET", "/v1/apps/app_0123").status == 401)

            let metrics = try await server.scrapeMetrics()
            #expect(
                metrics.value(
                    "marquee_http_requests_total",
                    ["method": "GET", "route": "/v1/events/{eventKey}", "status": "404"]
                ) == 2
            )
            #expect(
                metrics.value("marquee_http_requests_total", ["method": "GET", "route": "unmatched", "status": "404"])
                    == 1
            )
            #expect(
                metrics.value(
                    "marquee_http_requests_total",
                    ["method": "GET", "route": "/v1/apps/{appID}", "status": "401"]
                ) == 1
            )
            #expect(
                metrics.value("marquee_http_requests_total", ["method": "POST", "route": "/v1/apps", "status": "201"])
                    == 1
            )
            for path in ["no-such-event", "/definitely", "4711", "app_0123"] {
                #expect(!metrics.textWithoutValues.contains(path), "/metrics shows the path fragment \(path)")
            }
            // Every route label is a template of the document or `unmatched`.
            let document = try await server.client.send("GET", "/openapi.json").json["paths"] as? [String: Any] ?? [:]
            let templates = Set(document.keys).union(["unmatched", "/openapi.json", "/openapi.yaml"])
            for sample in metrics.series("marquee_http_requests_total") {
                #expect(
                    templates.contains(sample.labels["route"] ?? ""),
                    "route label \(sample.labels["route"] ?? "") is no template"
                )
            }
        }
    }

    @Test("/metrics is open by default, 404 when switched off, and takes only its own bearer token when one is set")
    func access() async throws {
        try await TestServer.run(.sqlite) { server in
            let open = try await server.client.send("GET", "/metrics")
            #expect(open.status == 200)
            #expect(open.header("Content-Type")?.hasPrefix("text/plain") == true)
        }
        try await TestServer.run(.sqlite, settings: ["metrics.enabled": "false"]) { server in
            let off = try await server.client.send("GET", "/metrics")
            #expect(off.status == 404)
            #expect(off.header("Content-Type") == "application/problem+json")
        }
        try await TestServer.run(.sqlite, settings: ["metrics.bearerToken": "scrape-me-0123"]) { server in
            #expect(try await server.client.send("GET", "/metrics").status == 401)
            #expect(try await server.client.send("GET", "/metrics", key: "wrong").status == 401)
            // An API key is not the metrics token.
            #expect(try await server.client.send("GET", "/metrics", key: server.deploymentKey).status == 401)
            let scraped = try await server.client.send("GET", "/metrics", key: "scrape-me-0123")
            #expect(scraped.status == 200)
            #expect(scraped.text.contains("marquee_http_requests_total"))
            #expect(!scraped.text.contains("scrape-me-0123"))
        }
    }

    @Test("a search for a leaked fragment reads names, labels and comments, not the numbers a fragment may turn up in")
    func leakSearchSkipsValues() {
        let scrape = MetricsScrape(
            """
            # TYPE marquee_http_request_duration_seconds histogram
            marquee_http_request_duration_seconds_sum{method="PUT",route="/v1/apps/{appID}"} 0.005447114
            """
        )
        #expect(!scrape.textWithoutValues.contains("4711"))
        #expect(scrape.textWithoutValues.contains(#"route="/v1/apps/{appID}""#))
        #expect(scrape.textWithoutValues.contains("# TYPE marquee_http_request_duration_seconds histogram"))
    }
}
