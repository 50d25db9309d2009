import Foundation

/// A table for people: upper-case headers, columns padded to their widest cell, two spaces
/// between them, as kubectl and gh print lists.
struct Table: Sendable {
    var headers: [String]
    var rows: [[String]] = []

    init(_ headers: String...) {
        self.headers = headers
    }

    mutating func append(_ cells: String...) {
        rows.append(cells)
    }

    var text: String {
        let all = [headers.map { $0.uppercased() }] + rows
        var widths = [Int](repeating: 0, count: headers.count)
        for row in all {
            for (index, cell) in row.enumerated() where index < widths.count {
                widths[index] = max(widths[index], cell.count)
            }
        }
        return all.map { row in
            row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            .joined(separator: "  ")
        }
        .joined(separator: "\n")
    }

    /// Label–value lines for one resource, the labels padded to the widest.
    static func details(_ pairs: [(String, String)]) -> String {
        let width = pairs.map(\.0.count).max() ?? 0
        return pairs.map { "\($0.0.padding(toLength: width, withPad: " ", startingAt: 0))  \($0.1)" }.joined(
            separator: "\n"
        )
    }
}
