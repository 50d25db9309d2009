import Foundation
import MarqueeClient

/// Turns the lines of a token file into the batch endpoint's items, or into the reason a row is
/// refused. Checks what the file can get wrong by itself (shape, missing fields, unknown
/// environments); the server checks the rest (a token that is not hex, an iOS version that does
/// not parse), and the importer maps its answer back to lines.
struct TokenRowParser: Sendable {
    typealias Item = Components.Schemas.PushToStartTokenBatchItem

    /// What the row's columns or keys do not give.
    struct Defaults: Sendable {
        var environment: Components.Schemas.Environment?
        var attributesType: String?
    }

    /// A refused row: the field (a column or key name; empty for the whole row) and why.
    struct RowError: Error, Sendable, Equatable {
        var field: String
        var detail: String
    }

    /// The fields, by the names the API uses.
    enum Field: String, CaseIterable, Sendable {
        case token, environment, attributesType, deviceID, userID, tags, iosVersion, frequentPushesEnabled

        /// A CSV header or JSON key, compared without case, spaces, `_` and `-`
        /// (`attributes_type`, `Attributes Type`, `ios-version` all match).
        init?(name: String) {
            let wanted = Self.normalized(name)
            guard let field = Self.allCases.first(where: { Self.normalized($0.rawValue) == wanted }) else { return nil }
            self = field
        }

        static func normalized(_ name: String) -> String {
            String(name.lowercased().filter { $0.isLetter || $0.isNumber })
        }
    }

    let format: TokenFileFormat
    let defaults: Defaults
    /// The CSV header's fields, in column order (empty for JSON Lines).
    private(set) var columns: [Field] = []

    init(format: TokenFileFormat, defaults: Defaults) {
        self.format = format
        self.defaults = defaults
    }

    /// Whether the next non-empty line is a header to read with `readHeader`.
    var needsHeader: Bool { format == .csv && columns.isEmpty }

    /// Reads the CSV header row; unknown columns, or no `token` column, refuse the whole file.
    mutating func readHeader(_ line: String) throws(CLIFailure) {
        let names = Self.csvFields(line) ?? []
        var columns: [Field] = []
        for name in names {
            guard let field = Field(name: name.trimmingCharacters(in: .whitespaces)) else {
                throw .usage(
                    "the CSV header has an unknown column \"\(name)\"; the columns are "
                        + Field.allCases.map(\.rawValue).joined(separator: ", ")
                )
            }
            if columns.contains(field) { throw .usage("the CSV header names \"\(field.rawValue)\" twice") }
            columns.append(field)
        }
        guard columns.contains(.token) else { throw .usage("the CSV header has no token column (got: \(line))") }
        self.columns = columns
    }

    /// The item of one data line.
    func item(_ line: String) -> Result<Item, RowError> {
        switch format {
        case .csv: csvItem(line)
        case .jsonl: jsonItem(line)
        }
    }

    private func csvItem(_ line: String) -> Result<Item, RowError> {
        guard let cells = Self.csvFields(line) else {
            return .failure(RowError(field: "", detail: "unbalanced quotes"))
        }
        guard cells.count == columns.count else {
            return .failure(
                RowError(
                    field: "",
                    detail: "expected \(columns.count) fields as the header names, found \(cells.count)"
                )
            )
        }
        var values: [Field: Any] = [:]
        for (field, cell) in zip(columns, cells) {
            let text = cell.trimmingCharacters(in: .whitespaces)
            guard !text.isEmpty else { continue }
            switch field {
            case .tags:
                values[field] = text.split(whereSeparator: { $0 == ";" || $0 == "," }).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                .filter { !$0.isEmpty }
            case .frequentPushesEnabled:
                guard let flag = Self.boolean(text) else {
                    return .failure(RowError(field: field.rawValue, detail: "expected true or false, got \"\(text)\""))
                }
                values[field] = flag
            default:
                values[field] = text
            }
        }
        return item(values)
    }

    private func jsonItem(_ line: String) -> Result<Item, RowError> {
        guard let object = try? JSONDecoder().decode([String: JSONRowValue].self, from: Data(line.utf8)) else {
            return .failure(RowError(field: "", detail: "not a JSON object"))
        }
        var values: [Field: Any] = [:]
        for (key, value) in object {
            guard let field = Field(name: key) else {
                return .failure(
                    RowError(
                        field: key,
                        detail: "unknown field; the fields are "
                            + Field.allCases.map(\.rawValue).joined(separator: ", ")
                    )
                )
            }
            switch (field, value) {
            case (_, .null): continue
            case (.tags, .strings(let tags)): values[field] = tags
            case (.tags, _): return .failure(RowError(field: key, detail: "expected an array of strings"))
            case (.frequentPushesEnabled, .bool(let flag)): values[field] = flag
            case (.frequentPushesEnabled, _): return .failure(RowError(field: key, detail: "expected true or false"))
            case (_, .string(let text)): values[field] = text
            case (_, _): return .failure(RowError(field: key, detail: "expected a string"))
            }
        }
        return item(values)
    }

    private func item(_ values: [Field: Any]) -> Result<Item, RowError> {
        guard let token = values[.token] as? String, !token.isEmpty else {
            return .failure(RowError(field: Field.token.rawValue, detail: "missing"))
        }
        let environment: Components.Schemas.Environment
        if let text = values[.environment] as? String {
            guard let parsed = Components.Schemas.Environment(rawValue: text) else {
                return .failure(
                    RowError(field: Field.environment.rawValue, detail: "\"\(text)\" is not sandbox or production")
                )
            }
            environment = parsed
        } else if let fallback = defaults.environment {
            environment = fallback
        } else {
            return .failure(RowError(field: Field.environment.rawValue, detail: "missing (or give --environment)"))
        }
        guard let attributesType = values[.attributesType] as? String ?? defaults.attributesType else {
            return .failure(
                RowError(field: Field.attributesType.rawValue, detail: "missing (or give --attributes-type)")
            )
        }
        return .success(
            Item(
                token: token,
                environment: environment,
                attributesType: attributesType,
                deviceID: values[.deviceID] as? String,
                userID: values[.userID] as? String,
                tags: values[.tags] as? [String],
                iosVersion: values[.iosVersion] as? String,
                frequentPushesEnabled: values[.frequentPushesEnabled] as? Bool
            )
        )
    }

    static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "yes", "1": true
        case "false", "no", "0": false
        default: nil
        }
    }

    /// The fields of one CSV line (RFC 4180 quoting: `"a,b"`, `"say ""hi"""`); nil when a quote is
    /// left open.
    static func csvFields(_ line: String) -> [String]? {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var iterator = line.makeIterator()
        var pending: Character? = iterator.next()
        while let character = pending {
            pending = iterator.next()
            if quoted {
                if character == "\"" {
                    if pending == "\"" {
                        field.append("\"")
                        pending = iterator.next()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" && field.trimmingCharacters(in: .whitespaces).isEmpty {
                field = ""
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        if quoted { return nil }
        fields.append(field)
        return fields
    }
}
