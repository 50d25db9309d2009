import Foundation

/// A schema's `pattern`, compiled once when the document is read. Compiling it for every request
/// that names an event key or an ID cost more than the rest of the contract check together.
struct SchemaPattern: @unchecked Sendable {
    // `@unchecked`: an NSRegularExpression is immutable once made and safe to match on from any
    // thread (Foundation documents it so); nothing here changes after `init`.
    let source: String
    /// Nil for a pattern Foundation cannot compile: such a pattern holds nothing back, as before.
    private let expression: NSRegularExpression?
    /// The same pattern read as one run of a character class, when it is that simple (event keys,
    /// tokens, IDs): it accepts, without the regular expression's bridging, text the expression
    /// accepts too. Text it does not accept is asked of the expression, so that the answer is
    /// always the expression's (its `$` also takes a final line break, for one).
    private let run: SchemaPatternRun?

    init(_ source: String) {
        self.source = source
        expression = try? NSRegularExpression(pattern: source)
        run = expression == nil ? nil : SchemaPatternRun(source)
    }

    func matches(_ text: String) -> Bool {
        guard let expression else { return true }
        if let run, run.accepts(text) { return true }
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        return expression.firstMatch(in: text, range: range) != nil
    }
}
