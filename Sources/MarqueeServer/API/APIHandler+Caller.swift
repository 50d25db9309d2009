import MarqueeAPI
import MarqueeCore
import MarqueeEngine

extension APIHandler {
    /// `GET /v1/me`: the key's role and app, for a console to show what the key may do.
    func getCaller(_ input: Operations.GetCaller.Input) async throws -> Operations.GetCaller.Output {
        guard let key = try scope.apiKey else { throw Problem(.unauthorized) }
        var app: Components.Schemas.App?
        if let appID = key.appID {
            let own: App
            if let known = try scope.app, known.id == appID {
                own = known
            } else {
                own = try await engine.apps.app(appID)
            }
            app = .init(own, signingKey: try await engine.apps.currentSigningKey(of: own))
        }
        return .ok(
            .init(
                body: .json(
                    .init(
                        role: .init(key.role),
                        deploymentKey: key.isDeploymentKey,
                        keyPrefix: key.prefix,
                        app: app,
                        emulator: emulator != nil
                    )
                )
            )
        )
    }
}
