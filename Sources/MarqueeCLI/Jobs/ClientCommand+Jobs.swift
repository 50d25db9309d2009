import MarqueeClient

extension ClientCommand {
    /// A new job (`marquee start`, `marquee jobs resend-uncertain`): followed to its end with
    /// `--follow` (the default when standard error is a terminal), else printed with how to follow it.
    func followOrPrint(
        _ response: MarqueeResponse<Components.Schemas.Job>,
        follow: Bool?,
        client: MarqueeClient,
        context: CLIContext,
        saying what: String,
        devices preposition: String
    ) async throws {
        let job = response.value
        guard follow ?? context.standardErrorIsTerminal else {
            output(response, in: context) { job in
                let total = job.progress.total.map { " \(preposition) \(Formatting.count($0)) devices" } ?? ""
                return "\(what) \(job.id)\(total): follow it with `marquee jobs follow \(job.id)`"
            }
            return
        }
        if !options.json { context.printError("\(what) \(job.id)") }
        try await JobsCommand.follow(job.id, client: client, options: options, context: context)
    }
}
