import Crypto
import Foundation
import MarqueeCore

/// An app created through the API, with a signing key and one key per role.
public struct TestApp: Sendable {
    public var id: String
    public var bundleID: String
    public var adminKey: String
    public var publisherKey: String
    public var appKey: String
    /// The signing key uploaded for it (to register with an emulator outside the server).
    public var signingKeyID: String
    /// The Apple team every test app belongs to.
    public static let teamID = "TEAM123456"
    public var teamID: String { Self.teamID }
    public var privateKeyPEM: String

    public init(
        id: String,
        bundleID: String,
        adminKey: String,
        publisherKey: String,
        appKey: String,
        signingKeyID: String = "",
        privateKeyPEM: String = ""
    ) {
        self.id = id
        self.bundleID = bundleID
        self.adminKey = adminKey
        self.publisherKey = publisherKey
        self.appKey = appKey
        self.signingKeyID = signingKeyID
        self.privateKeyPEM = privateKeyPEM
    }
}

extension TestServer {
    /// Creates an app over the API the way an operator would: the app, its .p8, and a key per role.
    public func makeApp(
        _ name: String = "Scores",
        environments: [String] = ["sandbox", "production"]
    ) async throws -> TestApp {
        let bundleID = "com.example.\(name.lowercased()).t\(UUID().uuidString.prefix(6).lowercased())"
        let created = try await client.send(
            "POST",
            "/v1/apps",
            key: deploymentKey,
            json: ["name": name, "bundleID": bundleID, "teamID": TestApp.teamID, "environments": environments]
        )
        guard created.status == 201, let id = created.json["id"] as? String else {
            throw TestSetupError("creating the app answered \(created.status): \(created.text)")
        }
        let signingKeyID =
            "KEY" + String(UUID().uuidString.prefix(7)).uppercased().replacingOccurrences(of: "-", with: "0")
        let privateKeyPEM = P256.Signing.PrivateKey().pemRepresentation
        let keyUpload = try await client.send(
            "PUT",
            "/v1/apps/\(id)/signing-key",
            key: deploymentKey,
            json: ["keyID": signingKeyID, "privateKey": privateKeyPEM]
        )
        guard keyUpload.status == 200 else {
            throw TestSetupError("the signing key answered \(keyUpload.status): \(keyUpload.text)")
        }
        var keys: [String: String] = [:]
        for role in ["admin", "publisher", "app"] {
            let response = try await client.send(
                "POST",
                "/v1/apps/\(id)/api-keys",
                key: deploymentKey,
                json: ["role": role, "label": role]
            )
            guard response.status == 201, let key = response.json["key"] as? String else {
                throw TestSetupError("creating a \(role) key answered \(response.status): \(response.text)")
            }
            keys[role] = key
        }
        return TestApp(
            id: id,
            bundleID: bundleID,
            adminKey: keys["admin"]!,
            publisherKey: keys["publisher"]!,
            appKey: keys["app"]!,
            signingKeyID: signingKeyID,
            privateKeyPEM: privateKeyPEM
        )
    }

    /// Creates (or updates) an event over the API as the app's publisher.
    public func putEvent(
        _ app: TestApp,
        key: String,
        environments: [String] = ["sandbox"],
        storagePolicy: String = "mostRecentMessage"
    ) async throws -> TestHTTPClient.Response {
        try await client.send(
            "PUT",
            "/v1/events/\(key)",
            key: app.publisherKey,
            json: [
                "title": "Arsenal v Chelsea",
                "attributesType": "MatchAttributes",
                "environments": environments,
                "storagePolicy": storagePolicy,
                "plannedStart": "2026-11-28T15:00:00Z",
                "plannedEnd": "2026-11-28T17:00:00Z",
            ]
        )
    }
}
