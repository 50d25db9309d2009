import MarqueeCore

extension RequestScope {
    /// The app authentication found with the key, when the key is that app's own and its role
    /// allows `role`: what a handler's `authorizedApp` would answer without a read. Nil otherwise
    /// (a deployment key, a weaker role, an app not remembered), and the request goes to the
    /// generated route, which answers those cases.
    func app(allowing role: APIKeyRole) -> App? {
        guard let apiKey, let appID = apiKey.appID, apiKey.role.allows(role), let app, app.id == appID else {
            return nil
        }
        return app
    }
}
