import MarqueeCore
import MarqueeEngine

extension RequestScope {
    /// The app authentication found with the key, when the key is that app's own and its role
    /// allows `role`: what a handler's `authorizedApp` would answer without a read. Nil otherwise
    /// (a deployment key, a weaker role, an app not remembered), and the request goes to the
    /// generated route, which answers those cases.
    func app(allowing role: APIKeyRole) -> App? {
        AuthenticatedCaller.ownApp(key: apiKey, app: app, allowing: role)
    }
}

extension AuthenticatedCaller {
    /// `RequestScope.app(allowing:)` for a caller found before any middleware ran.
    func ownApp(allowing role: APIKeyRole) -> App? {
        Self.ownApp(key: key, app: app, allowing: role)
    }

    static func ownApp(key: APIKey?, app: App?, allowing role: APIKeyRole) -> App? {
        guard let key, let appID = key.appID, key.role.allows(role), let app, app.id == appID else { return nil }
        return app
    }
}
