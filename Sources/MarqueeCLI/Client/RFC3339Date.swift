import ArgumentParser
import Foundation
import MarqueeCore

/// A time on the command line as the API speaks it: RFC 3339 with a zone
/// (`2026-11-28T15:00:00Z`, `2026-11-28T16:00:00+01:00`, fractional seconds allowed).
struct RFC3339Date: ExpressibleByArgument, Sendable {
    var date: Date

    init?(argument: String) {
        guard let date = Self.parse(argument) else { return nil }
        self.date = date
    }

    static func parse(_ text: String) -> Date? {
        RFC3339.parse(text)
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
