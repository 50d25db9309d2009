import Foundation
import MarqueeCore
import OpenAPIRuntime

/// The one style of every JSON answer: compact, keys sorted, `/` unescaped. The generated handlers
/// pretty-printed by default while problem documents and job events were compact, so one answer's
/// bytes depended on which code path wrote it.
enum JSONAnswerStyle {
    /// For the handlers swift-openapi-generator writes.
    static let openAPI: JSONEncodingOptions = [.sortedKeys, .withoutEscapingSlashes]

    /// For the answers the server encodes itself (problem documents, job events).
    static let foundation: JSONEncoder.OutputFormatting = [.sortedKeys, .withoutEscapingSlashes]

    /// An encoder that writes a generated type's JSON as its generated route does: this style,
    /// dates as `RFC3339DateTranscoder` writes them. For the answers served without the generated
    /// route (`ChannelReadMiddleware`, `TokenRegistrationMiddleware`), byte for byte the same.
    static func generatedRouteEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = foundation
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(RFC3339.format(date))
        }
        return encoder
    }
}
