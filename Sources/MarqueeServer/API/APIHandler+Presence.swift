import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func reportDevicePresence(
        _ input: Operations.ReportDevicePresence.Input
    ) async throws -> Operations.ReportDevicePresence.Output {
        let app = try await authorizedApp(.app)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let event = try await engine.events.view(app: app, key: input.path.eventKey).event
        let view = try await engine.presence.report(
            app: app,
            event: event,
            token: input.path.token,
            PresenceReport(environment: body.environment.domain, state: body.state.domain, activityID: body.activityID)
        )
        return .ok(.init(body: .json(.init(view, eventKey: event.externalKey))))
    }

    func getEventFunnel(_ input: Operations.GetEventFunnel.Input) async throws -> Operations.GetEventFunnel.Output {
        let app = try await authorizedApp(.publisher)
        let event = try await engine.events.view(app: app, key: input.path.eventKey).event
        let funnels = try await engine.presence.funnels(app: app, event: event)
        return .ok(
            .init(
                body: .json(
                    .init(eventKey: event.externalKey, environments: funnels.map(Components.Schemas.EventFunnel.init))
                )
            )
        )
    }

    func getEventFunnelSeries(
        _ input: Operations.GetEventFunnelSeries.Input
    ) async throws -> Operations.GetEventFunnelSeries.Output {
        let app = try await authorizedApp(.publisher)
        let event = try await engine.events.view(app: app, key: input.path.eventKey).event
        let timeline = try await engine.presence.timeline(app: app, event: event)
        return .ok(.init(body: .json(.init(timeline, eventKey: event.externalKey))))
    }
}

extension Components.Schemas.PresenceState {
    var domain: PresenceState {
        switch self {
        case .showing: .showing
        case .ended: .ended
        case .dismissed: .dismissed
        case .absent: .absent
        }
    }

    init(_ state: PresenceState) {
        switch state {
        case .showing: self = .showing
        case .ended: self = .ended
        case .dismissed: self = .dismissed
        case .absent: self = .absent
        }
    }
}

extension Components.Schemas.DevicePresence {
    init(_ view: PresenceService.DeviceView, eventKey: String) {
        self.init(
            eventKey: eventKey,
            environment: .init(view.presence.environment),
            state: .init(view.presence.state),
            activityID: view.presence.activityID,
            firstReportedAt: view.presence.firstReportedAt,
            reportedAt: view.presence.reportedAt,
            started: view.standing.started,
            uncertain: view.standing.uncertain
        )
    }
}

extension Components.Schemas.EventFunnel {
    init(_ funnel: DeliveryFunnel) {
        self.init(
            environment: .init(funnel.environment),
            targeted: Int(funnel[.targeted]),
            sent: Int(funnel[.sent]),
            accepted: Int(funnel[.accepted]),
            rejected: .init(
                devices: Int(funnel[.rejected]),
                byReason: .init(additionalProperties: funnel.rejectedByReason.mapValues { Int($0) })
            ),
            uncertain: Int(funnel[.uncertain]),
            failed: Int(funnel[.failed]),
            confirmedShowing: Int(funnel[.showing]),
            absent: Int(funnel[.absent]),
            ended: Int(funnel[.ended]),
            lateJoinersStarted: Int(funnel[.lateJoinersStarted]),
            absentThenStarted: Int(funnel[.absentThenStarted])
        )
    }
}

extension Components.Schemas.EventFunnelSeries {
    init(_ timeline: DeliveryFunnelTimeline, eventKey: String) {
        let buckets = timeline.buckets
        self.init(
            eventKey: eventKey,
            from: buckets?.origin,
            until: buckets?.until,
            bucketSeconds: buckets.map { Int($0.stepMicroseconds / 1_000_000) },
            environments: timeline.series.map { series in
                .init(environment: .init(series.environment), points: buckets.map { Self.points(series, $0) } ?? [])
            }
        )
    }

    /// One point per bucket, as of the bucket's end.
    private static func points(
        _ series: DeliveryFunnelTimeline.Series,
        _ buckets: DeliveryFunnelTimeline.Buckets
    ) -> [Components.Schemas.FunnelPoint] {
        let counts = { (stage: FunnelStage) in series.counts(of: stage, bucketCount: buckets.count) }
        let (sent, accepted, showing, ended, lateJoiners) = (
            counts(.sent), counts(.accepted), counts(.showing), counts(.ended), counts(.lateJoinersStarted)
        )
        return (0..<buckets.count).map { index in
            .init(
                at: buckets.end(of: index),
                sent: Int(sent[index]),
                accepted: Int(accepted[index]),
                confirmedShowing: Int(showing[index]),
                ended: Int(ended[index]),
                lateJoinersStarted: Int(lateJoiners[index])
            )
        }
    }
}
