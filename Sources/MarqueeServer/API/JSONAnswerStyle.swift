import Foundation
import OpenAPIRuntime

/// The one style of every JSON answer: compact, keys sorted, `/` unescaped. The generated handlers
/// pretty-printed by default while problem documents and job events were compact, so one answer's
/// bytes depended on which code path wrote it.
enum JSONAnswerStyle {
    /// For the handlers swift-openapi-generator writes.
    static let openAPI: JSONEncodingOptions = [.sortedKeys, .withoutEscapingSlashes]

    /// For the answers the server encodes itself (problem documents, job events).
    static let foundation: JSONEncoder.OutputFormatting = [.sortedKeys, .withoutEscapingSlashes]
}
