/// Splits a migration file into statements at semicolons that are outside quotes, comments and
/// PostgreSQL dollar-quoted bodies: both drivers prepare one statement at a time.
enum SQLScript {
    static func statements(in script: String) -> [String] {
        let scalars = Array(script.unicodeScalars)
        var statements: [String] = []
        var current = String.UnicodeScalarView()
        var index = 0

        func flush() {
            let statement = String(current).trimmingWhitespace
            if !statement.isEmpty, !statement.isOnlyComments { statements.append(statement) }
            current = String.UnicodeScalarView()
        }

        while index < scalars.count {
            let scalar = scalars[index]
            let next: Unicode.Scalar? = index + 1 < scalars.count ? scalars[index + 1] : nil
            switch scalar {
            case "-" where next == "-":
                while index < scalars.count, scalars[index] != "\n" {
                    current.append(scalars[index])
                    index += 1
                }
                continue
            case "/" where next == "*":
                current.append(contentsOf: ["/", "*"])
                index += 2
                while index < scalars.count,
                    !(scalars[index] == "*" && index + 1 < scalars.count && scalars[index + 1] == "/")
                {
                    current.append(scalars[index])
                    index += 1
                }
                if index < scalars.count {
                    current.append(contentsOf: ["*", "/"])
                    index += 2
                }
                continue
            case "'", "\"":
                current.append(scalar)
                index += 1
                while index < scalars.count {
                    current.append(scalars[index])
                    index += 1
                    if scalars[index - 1] == scalar { break }  // a doubled quote reopens on the next pass
                }
                continue
            case "$":
                if let end = dollarQuoteEnd(scalars, at: index) {
                    current.append(contentsOf: scalars[index..<end])
                    index = end
                    continue
                }
            case ";":
                flush()
                index += 1
                continue
            default:
                break
            }
            current.append(scalar)
            index += 1
        }
        flush()
        return statements
    }

    /// Where the dollar-quoted body whose tag starts at `index` ends, past its closing tag (or the
    /// script's end); `nil` when no tag starts there: a tag is `$$` or `$name$`, and a positional
    /// parameter like `$1` is not one.
    private static func dollarQuoteEnd(_ scalars: [Unicode.Scalar], at index: Int) -> Int? {
        var end = index + 1
        while end < scalars.count, scalars[end] == "_" || scalars[end].properties.isAlphabetic {
            end += 1
        }
        guard end < scalars.count, scalars[end] == "$" else { return nil }
        let tag = Array(scalars[index...end])
        var cursor = end + 1
        while cursor < scalars.count {
            if scalars[cursor] == "$", cursor + tag.count <= scalars.count,
                Array(scalars[cursor..<(cursor + tag.count)]) == tag
            {
                return cursor + tag.count
            }
            cursor += 1
        }
        return scalars.count
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view.removeFirst() }
        while let last = view.last, last.isWhitespace { view.removeLast() }
        return String(view)
    }

    /// True for a fragment holding nothing but `--` comments (the tail of a file).
    fileprivate var isOnlyComments: Bool {
        split(separator: "\n").allSatisfy { line in
            let trimmed = line.drop(while: \.isWhitespace)
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
    }
}
