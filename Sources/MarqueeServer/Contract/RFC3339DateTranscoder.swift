import Foundation
import MarqueeCore
import OpenAPIRuntime

/// The generated code's dates as RFC 3339 allows them (`RFC3339.parse`): fractional seconds, a
/// lowercase `t` or `z`, any offset. Written in UTC to the second, as before.
struct RFC3339DateTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String {
        RFC3339.format(date)
    }

    func decode(_ text: String) throws -> Date {
        guard let date = RFC3339.parse(text) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription: "must be an RFC 3339 date-time with a zone, such as 2026-11-28T15:00:00Z"
                )
            )
        }
        return date
    }
}
