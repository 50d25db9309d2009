import Foundation
import MarqueeAPI
import MarqueeCore
import Testing

@testable import MarqueeServer

/// A registration's answer is written without Foundation's encoder; its bytes are the encoder's.
@Suite("A push-to-start token's JSON answer")
struct PushToStartTokenAnswerTests {
    static let registered = Date(timeIntervalSince1970: 1_767_225_600.25)

    static func token(
        deviceID: String? = nil,
        userID: String? = nil,
        tags: [String] = [],
        iosVersion: String? = nil,
        invalidated: Bool = false,
        deviceToken: String? = nil,
        attributesType: String = "MatchAttributes"
    ) -> PushToStartToken {
        PushToStartToken(
            rowID: 7,
            appID: AppID(),
            environment: .production,
            attributesType: attributesType,
            token: "8f2a6c0d9e1b4a7c",
            deviceID: deviceID,
            userID: userID,
            tags: tags,
            iosVersion: iosVersion,
            frequentPushesEnabled: invalidated,
            firstRegisteredAt: registered,
            lastRegisteredAt: registered.addingTimeInterval(90),
            invalidatedAt: invalidated ? registered.addingTimeInterval(120) : nil,
            invalidationReason: invalidated ? .unregistered : nil,
            deviceToken: deviceToken
        )
    }

    static var tokens: [PushToStartToken] {
        [
            token(),
            token(deviceID: "device-1", userID: "user-1", tags: ["arsenal", "premier-league"], iosVersion: "18.2"),
            token(invalidated: true, deviceToken: "abcdef"),
            token(deviceID: #"a "quoted" \ back\slash / slash"#, userID: "caf\u{e9} \u{1F3C6} \u{2028} \u{7F}"),
            token(tags: ["", "<&>", "tab\there"]),
            token(userID: "line\nbreak", attributesType: "bell\u{7}"),
        ]
    }

    static func encoded(_ token: PushToStartToken) throws -> [UInt8] {
        Array(try JSONAnswerStyle.generatedRouteEncoder().encode(Components.Schemas.PushToStartToken(token)))
    }

    @Test("is byte for byte what the generated route's encoder writes", arguments: tokens.indices)
    func sameBytes(index: Int) throws {
        let token = Self.tokens[index]
        let expected = try Self.encoded(token)
        #expect(try PushToStartTokenAnswer.json(token) == expected, "\(String(decoding: expected, as: UTF8.self))")
    }

    @Test("a string with a control character is left to the encoder")
    func controlCharacters() {
        #expect(PushToStartTokenAnswer.written(Self.tokens[4]) == nil)
        #expect(PushToStartTokenAnswer.written(Self.tokens[5]) == nil)
        #expect(PushToStartTokenAnswer.written(Self.tokens[1]) != nil)
    }
}
