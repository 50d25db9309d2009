import Foundation
import MarqueeKit
import MarqueeTesting
import Testing
import Yams

/// The requests MarqueeKit sends, to the byte, and against `openapi.yaml` where the operation is there.
@Suite("Request builders")
struct MarqueeRequestsTests {
    static let token = "8f2a6c0d9e1b4a7c3f5e2d8b6a4c1e9f7d3b5a2c8e6f4d1b9a7c5e3f2d8b6a4c"
    static let deviceToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
    static let updateToken = "5b1d9f7e3c2a4b6d8f0e1c3a5b7d9f2e4c6a8b0d1f3e5c7a9b2d4f6e8a0c1e3b"
    let requests = MarqueeRequests(
        baseURL: URL(string: "https://marquee.example.com/api/")!,
        appKey: "mq_app1_secret",
        environment: .production
    )
    let configuration = MarqueeKitConfiguration(
        baseURL: URL(string: "https://marquee.example.com/api/")!,
        appKey: "mq_app1_secret",
        environment: .production,
        attributesType: "MatchAttributes",
        deviceID: "device-42",
        userID: "user-7",
        tags: ["arsenal"],
        iosVersion: "18.2",
        frequentPushesEnabled: true
    )

    /// The operation's request body schema in `openapi.yaml`: its property names and required ones;
    /// nil when the document has no such operation yet.
    static func documentedBody(path: String, method: String) throws -> (properties: Set<String>, required: Set<String>)?
    {
        let yaml = try String(
            contentsOf: SourceTree.root.appendingPathComponent("Sources/MarqueeAPI/openapi.yaml"),
            encoding: .utf8
        )
        let document = try #require(try Yams.load(yaml: yaml) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        // Path parameters are matched whatever their names.
        let shape = { (path: String) in
            path.replacingOccurrences(of: #"\{[^}]*\}"#, with: "{}", options: .regularExpression)
        }
        guard let item = paths.first(where: { shape($0.key) == shape(path) })?.value as? [String: Any],
            let operation = item[method] as? [String: Any]
        else { return nil }
        let content = try #require(
            ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"]
                as? [String: Any]
        )
        let reference = try #require((content["schema"] as? [String: Any])?["$ref"] as? String)
        let schemas = try #require((document["components"] as? [String: Any])?["schemas"] as? [String: Any])
        let schema = try #require(schemas[String(reference.split(separator: "/").last ?? "")] as? [String: Any])
        let properties = Set((schema["properties"] as? [String: Any] ?? [:]).keys)
        return (properties, Set(schema["required"] as? [String] ?? []))
    }

    func json(_ request: MarqueeHTTPRequest) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any])
    }

    @Test("registering a push-to-start token: PUT /v1/push-to-start-tokens/{token} with the registration")
    func pushToStartRegistration() throws {
        let request = try requests.registerPushToStartToken(
            Self.token,
            configuration: configuration,
            deviceToken: Self.deviceToken
        )
        #expect(request.method == "PUT")
        #expect(request.path == "/v1/push-to-start-tokens/\(Self.token)")
        #expect(request.url.absoluteString == "https://marquee.example.com/api/v1/push-to-start-tokens/\(Self.token)")
        #expect(request.headers["Authorization"] == "Bearer mq_app1_secret")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(
            String(decoding: request.body ?? Data(), as: UTF8.self) == """
                {"attributesType":"MatchAttributes","deviceID":"device-42","deviceToken":"\(Self.deviceToken)",\
                "environment":"production",\
                "frequentPushesEnabled":true,"iosVersion":"18.2","tags":["arsenal"],"userID":"user-7"}
                """
        )

        let documented = try #require(try Self.documentedBody(path: "/v1/push-to-start-tokens/{token}", method: "put"))
        let sent = Set(try json(request).keys)
        #expect(documented.required.isSubset(of: sent))
        // `deviceToken` is the field being added beside the push-to-start token (issue 34, part 3).
        #expect(sent.subtracting(documented.properties).isSubset(of: ["deviceToken"]))
    }

    @Test("what the app does not know is left out of the registration, not sent empty")
    func minimalRegistration() throws {
        let bare = MarqueeKitConfiguration(
            baseURL: URL(string: "http://127.0.0.1:8080")!,
            appKey: "k",
            environment: .sandbox,
            attributesType: "MatchAttributes",
            iosVersion: nil
        )
        let request = try MarqueeRequests(baseURL: bare.baseURL, appKey: "k", environment: .sandbox)
            .registerPushToStartToken(Self.token, configuration: bare, deviceToken: nil)
        #expect(request.url.absoluteString == "http://127.0.0.1:8080/v1/push-to-start-tokens/\(Self.token)")
        #expect(
            String(decoding: request.body ?? Data(), as: UTF8.self)
                == #"{"attributesType":"MatchAttributes","environment":"sandbox"}"#
        )
    }

    @Test("registering an update token: PUT /v1/activities/{activityID}/update-token, as the schema says")
    func updateTokenRegistration() throws {
        let request = try requests.registerUpdateToken(
            Self.updateToken,
            activityID: "7F3A9C2E-4B1D-4E6F-8A0C-2D4E6F8A0B1C",
            eventKey: "ars-che-2026-11-28",
            pushToStartToken: Self.token,
            frequentPushesEnabled: false
        )
        #expect(request.method == "PUT")
        #expect(request.path == "/v1/activities/7F3A9C2E-4B1D-4E6F-8A0C-2D4E6F8A0B1C/update-token")
        #expect(
            String(decoding: request.body ?? Data(), as: UTF8.self) == """
                {"environment":"production","eventKey":"ars-che-2026-11-28","frequentPushesEnabled":false,\
                "pushToStartToken":"\(Self.token)","token":"\(Self.updateToken)"}
                """
        )
        let documented = try #require(
            try Self.documentedBody(path: "/v1/activities/{activityID}/update-token", method: "put")
        )
        let sent = Set(try json(request).keys)
        #expect(documented.required.isSubset(of: sent))
        #expect(sent.isSubset(of: documented.properties))
    }

    @Test("reporting presence: PUT /v1/events/{eventKey}/presence/{pushToStartToken}, activityID with showing only")
    func presenceReport() throws {
        let showing = try requests.reportPresence(
            PresenceReport(eventKey: "ars-che:2026", state: .showing, activityID: "A1"),
            pushToStartToken: Self.token
        )
        #expect(showing.method == "PUT")
        #expect(showing.path == "/v1/events/ars-che:2026/presence/\(Self.token)")
        #expect(
            String(decoding: showing.body ?? Data(), as: UTF8.self)
                == #"{"activityID":"A1","environment":"production","state":"showing"}"#
        )
        for state in [PresenceReport.State.ended, .dismissed, .absent] {
            let request = try requests.reportPresence(
                PresenceReport(eventKey: "ars-che", state: state, activityID: "A1"),
                pushToStartToken: Self.token
            )
            #expect(
                String(decoding: request.body ?? Data(), as: UTF8.self)
                    == #"{"environment":"production","state":"\#(state.rawValue)"}"#
            )
        }
        // The operation is being added to the document (issue 34, part 2): once it is there, the body must match it.
        if let documented = try Self.documentedBody(
            path: "/v1/events/{eventKey}/presence/{pushToStartToken}",
            method: "put"
        ) {
            let sent = Set(try json(showing).keys)
            #expect(documented.required.isSubset(of: sent))
            #expect(sent.isSubset(of: documented.properties))
        }
    }

    @Test("what Marquee would refuse is not sent: tokens that are not hex, keys outside the pattern")
    func refusedBeforeSending() {
        #expect(throws: MarqueeKitError.self) {
            try requests.registerPushToStartToken("xyz", configuration: configuration, deviceToken: nil)
        }
        #expect(throws: MarqueeKitError.self) {
            try requests.registerPushToStartToken("abc", configuration: configuration, deviceToken: nil)
        }
        #expect(throws: MarqueeKitError.self) {
            try requests.registerPushToStartToken(Self.token, configuration: configuration, deviceToken: "zz")
        }
        #expect(throws: MarqueeKitError.self) {
            try requests.reportPresence(PresenceReport(eventKey: "a/b", state: .absent), pushToStartToken: Self.token)
        }
        #expect(throws: MarqueeKitError.self) {
            try requests.registerUpdateToken(
                Self.updateToken,
                activityID: "",
                eventKey: "ars-che",
                pushToStartToken: nil,
                frequentPushesEnabled: nil
            )
        }
    }
}
