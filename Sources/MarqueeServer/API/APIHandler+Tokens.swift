import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func registerPushToStartTokens(
        _ input: Operations.RegisterPushToStartTokens.Input
    ) async throws -> Operations.RegisterPushToStartTokens.Output {
        let app = try await authorizedApp(.app)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let registrations = body.tokens.map { item in
            PushToStartRegistration(
                environment: item.environment.domain,
                attributesType: item.attributesType,
                token: item.token,
                deviceID: item.deviceID,
                userID: item.userID,
                tags: item.tags ?? [],
                iosVersion: item.iosVersion,
                frequentPushesEnabled: item.frequentPushesEnabled ?? false,
                deviceToken: item.deviceToken
            )
        }
        let count = try await engine.tokens.register(app: app, registrations, pointerPrefix: "/tokens")
        return .ok(.init(body: .json(.init(registered: count))))
    }

    func registerPushToStartToken(
        _ input: Operations.RegisterPushToStartToken.Input
    ) async throws -> Operations.RegisterPushToStartToken.Output {
        let app = try await authorizedApp(.app)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let registration = PushToStartRegistration(
            environment: body.environment.domain,
            attributesType: body.attributesType,
            token: input.path.token,
            deviceID: body.deviceID,
            userID: body.userID,
            tags: body.tags ?? [],
            iosVersion: body.iosVersion,
            frequentPushesEnabled: body.frequentPushesEnabled ?? false,
            deviceToken: body.deviceToken
        )
        let token = try await engine.tokens.register(app: app, registration)
        return .ok(.init(body: .json(.init(token))))
    }

    func getPushToStartToken(
        _ input: Operations.GetPushToStartToken.Input
    ) async throws -> Operations.GetPushToStartToken.Output {
        let app = try await authorizedApp(.app)
        let token = try await engine.tokens.token(
            app: app,
            environment: input.query.environment.domain,
            attributesType: input.query.attributesType,
            token: input.path.token
        )
        return .ok(.init(body: .json(.init(token))))
    }

    func unregisterPushToStartToken(
        _ input: Operations.UnregisterPushToStartToken.Input
    ) async throws -> Operations.UnregisterPushToStartToken.Output {
        let app = try await authorizedApp(.app)
        try await engine.tokens.unregister(
            app: app,
            environment: input.query.environment.domain,
            attributesType: input.query.attributesType,
            token: input.path.token
        )
        return .noContent(.init())
    }

    func putActivityUpdateToken(
        _ input: Operations.PutActivityUpdateToken.Input
    ) async throws -> Operations.PutActivityUpdateToken.Output {
        let app = try await authorizedApp(.app)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let view = try await engine.events.view(app: app, key: body.eventKey)
        let activity = try await engine.tokens.putUpdateToken(
            app: app,
            activityID: input.path.activityID,
            event: view.event,
            environment: body.environment.domain,
            token: body.token,
            pushToStartToken: body.pushToStartToken,
            frequentPushesEnabled: body.frequentPushesEnabled
        )
        return .ok(.init(body: .json(.init(activity, eventKey: view.event.externalKey))))
    }

    func getActivity(_ input: Operations.GetActivity.Input) async throws -> Operations.GetActivity.Output {
        let app = try await authorizedApp(.app)
        let activity = try await engine.tokens.activity(app: app, activityID: input.path.activityID)
        let eventKey = try await engine.events.externalKey(app: app, eventID: activity.eventID) ?? ""
        return .ok(.init(body: .json(.init(activity, eventKey: eventKey))))
    }

    func unregisterActivity(
        _ input: Operations.UnregisterActivity.Input
    ) async throws -> Operations.UnregisterActivity.Output {
        let app = try await authorizedApp(.app)
        try await engine.tokens.unregisterActivity(app: app, activityID: input.path.activityID)
        return .noContent(.init())
    }
}
