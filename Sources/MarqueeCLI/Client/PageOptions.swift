import ArgumentParser

/// `--limit` and `--after` of the API's cursor pagination.
struct PageOptions: ParsableArguments {
    @Option(help: "Items per page, 1–1000 (the server's default: 100).")
    var limit: Int?

    @Option(help: ArgumentHelp("Start after this cursor (the `nextCursor` of the previous page).", valueName: "cursor"))
    var after: String?

    func validate() throws {
        if let limit, !(1...1000).contains(limit) { throw ValidationError("--limit must be between 1 and 1000") }
    }

    /// Tells a person on standard error how to get the next page, if there is one.
    static func hint(nextCursor: String?, json: Bool, in context: CLIContext) {
        guard let nextCursor, !json else { return }
        context.printError("(more: repeat with --after \(nextCursor))")
    }
}
