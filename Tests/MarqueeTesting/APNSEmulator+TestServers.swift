import Crypto
import MarqueeCore
import MarqueeEmulator

/// An emulator that outlives the servers of a test (a restart, replicas), reached as a `custom`
/// APNs target, as a deployment reaches a gateway.
extension APNSEmulator {
    /// The settings that point a server at this emulator, in both environments.
    public func customTargetSettings() throws -> [String: String] {
        guard let sandboxPush = pushURL(.sandbox), let sandboxManagement = channelManagementURL(.sandbox),
            let productionPush = pushURL(.production), let productionManagement = channelManagementURL(.production),
            let caFile = caCertificatePath
        else { throw TestSetupError("the emulator is not listening: start it first") }
        return [
            "apns.target": "custom",
            "apns.sandbox.pushURL": sandboxPush,
            "apns.sandbox.managementURL": sandboxManagement,
            "apns.production.pushURL": productionPush,
            "apns.production.managementURL": productionManagement,
            "apns.caFile": caFile,
        ]
    }

    /// Makes the app and its signing key known here, as Apple's developer account would.
    public func register(_ app: TestApp) throws {
        try registerApp(bundleID: app.bundleID, teamID: app.teamID)
        registerKey(
            teamID: app.teamID,
            keyID: app.signingKeyID,
            publicKey: try P256.Signing.PrivateKey(pemRepresentation: app.privateKeyPEM).publicKey
        )
    }
}
