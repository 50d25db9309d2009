import ArgumentParser
import Foundation

/// The two formats `marquee tokens import` reads.
enum TokenFileFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Comma-separated values with a header row naming the columns.
    case csv
    /// JSON Lines: one JSON object per line.
    case jsonl

    /// The format a file's extension says: `.csv`; `.jsonl`, `.ndjson` or `.json`.
    init?(path: String) {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "csv": self = .csv
        case "jsonl", "ndjson", "json": self = .jsonl
        default: return nil
        }
    }
}
