import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    func createApp(_ input: Operations.CreateApp.Input) async throws -> Operations.CreateApp.Output {
        try requireDeploymentKey()
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let app = try await engine.apps.createApp(
            .init(
                name: body.name,
                bundleID: body.bundleID,
                teamID: body.teamID,
                environments: body.environments.map(\.domain)
            )
        )
        return .created(.init(body: .json(.init(app, signingKey: nil))))
    }

    func listApps(_ input: Operations.ListApps.Input) async throws -> Operations.ListApps.Output {
        guard let key = try scope.apiKey else { throw Problem(.unauthorized) }
        let apps: [App]
        if let own = key.appID {
            guard key.role.allows(.admin) else {
                throw Problem(.forbidden, detail: "listing apps needs the admin role; the key has \(key.role.rawValue)")
            }
            apps = [try await engine.apps.app(own)]
        } else {
            apps = try await engine.apps.apps()
        }
        var answers: [Components.Schemas.App] = []
        for app in apps { answers.append(.init(app, signingKey: try await engine.apps.currentSigningKey(of: app))) }
        return .ok(.init(body: .json(.init(apps: answers))))
    }

    func getApp(_ input: Operations.GetApp.Input) async throws -> Operations.GetApp.Output {
        let app = try await managedApp(input.path.appID)
        return .ok(.init(body: .json(.init(app, signingKey: try await engine.apps.currentSigningKey(of: app)))))
    }

    func updateApp(_ input: Operations.UpdateApp.Input) async throws -> Operations.UpdateApp.Output {
        let app = try await managedApp(input.path.appID)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let updated = try await engine.apps.updateApp(
            app.id,
            name: body.name,
            environments: body.environments?.map(\.domain)
        )
        return .ok(.init(body: .json(.init(updated, signingKey: try await engine.apps.currentSigningKey(of: updated)))))
    }

    func putSigningKey(_ input: Operations.PutSigningKey.Input) async throws -> Operations.PutSigningKey.Output {
        let app = try await managedApp(input.path.appID)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let key = try await engine.apps.installSigningKey(
            appID: app.id,
            .init(
                keyID: body.keyID,
                teamID: body.teamID,
                privateKeyPEM: body.privateKey,
                environments: body.environments?.map(\.domain) ?? []
            )
        )
        return .ok(.init(body: .json(.init(key))))
    }

    func createAPIKey(_ input: Operations.CreateAPIKey.Input) async throws -> Operations.CreateAPIKey.Output {
        let app = try await managedApp(input.path.appID)
        guard case .json(let body) = input.body else { throw Problem(.unsupportedMediaType) }
        let (key, presented) = try await engine.apps.createAPIKey(
            appID: app.id,
            role: body.role.domain,
            label: body.label ?? ""
        )
        return .created(.init(body: .json(.init(apiKey: .init(key), key: presented))))
    }

    func listAPIKeys(_ input: Operations.ListAPIKeys.Input) async throws -> Operations.ListAPIKeys.Output {
        let app = try await managedApp(input.path.appID)
        let keys = try await engine.apps.apiKeys(appID: app.id)
        return .ok(.init(body: .json(.init(apiKeys: keys.map(Components.Schemas.APIKey.init)))))
    }

    func revokeAPIKey(_ input: Operations.RevokeAPIKey.Input) async throws -> Operations.RevokeAPIKey.Output {
        let app = try await managedApp(input.path.appID)
        guard let keyID = PublicID.parseAPIKey(input.path.keyID) else {
            throw Problem(.notFound, detail: "API key \(input.path.keyID) not found")
        }
        try await engine.apps.revokeAPIKey(appID: app.id, id: keyID)
        return .noContent(.init())
    }
}
