import Foundation
import MarqueeCore
import OpenAPIRuntime

/// Dates as the server takes them: RFC 3339 as the RFC allows (`RFC3339` in MarqueeCore), so that
/// the client reads any time the server or a proxy writes; sent with milliseconds when a time
/// has them.
struct RFC3339DateTranscoder: DateTranscoder {
    func encode(_ date: Date) throws -> String {
        RFC3339.format(date, milliseconds: true)
    }

    func decode(_ text: String) throws -> Date {
        guard let date = RFC3339.parse(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [], debugDescription: "not an RFC 3339 date-time: \(text)")
            )
        }
        return date
    }
}
