import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee jobs`: the durable jobs starts run as, with a publisher key.
struct JobsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "jobs",
        abstract:
            """
            List, show, follow and cancel jobs (starts at scale), and resend their uncertain starts, with a \
            publisher key.
            """,
        subcommands: [List.self, Show.self, Follow.self, Cancel.self, ResendUncertain.self]
    )
}

extension JobsCommand {
    struct List: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the app's jobs, newest first.")

        @OptionGroup var options: ClientOptions
        @OptionGroup var page: PageOptions

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let query = Operations.ListJobs.Input.Query(limit: page.limit, after: page.after)
            let response = try await client.send { try await $0.listJobs(query: query).ok.body.json }
            output(response, in: context) { list in
                var table = Table(
                    "id",
                    "kind",
                    "event",
                    "environment",
                    "state",
                    "sent",
                    "failed",
                    "uncertain",
                    "created"
                )
                for job in list.jobs {
                    let total = job.progress.total.map { " / \(Formatting.count($0))" } ?? ""
                    table.append(
                        job.id,
                        job.kind,
                        job.eventKey ?? "-",
                        job.environment?.rawValue ?? "-",
                        job.state.rawValue,
                        Formatting.count(job.progress.sent) + total,
                        Formatting.count(job.progress.failed),
                        Formatting.count(job.progress.uncertain),
                        Formatting.date(job.createdAt)
                    )
                }
                return table.text
            }
            PageOptions.hint(nextCursor: response.value.nextCursor, json: options.json, in: context)
        }
    }

    struct Show: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Shows a job and its progress.")

        @OptionGroup var options: ClientOptions

        @Argument(help: "The job's ID (job_…).")
        var jobID: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [jobID] in
                try await $0.getJob(path: .init(jobID: jobID)).ok.body.json
            }
            output(response, in: context) { JobsCommand.details($0) }
        }
    }

    struct Follow: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Follows a job's progress live until it ends.",
            discussion: """
                A progress bar on standard error when it is a terminal (sent, failed, uncertain, \
                rate, time left), then a summary. Exit code 0 when every delivery was accepted, 7 \
                when some failed or are uncertain, 5 when the job was cancelled, 6 when it failed.
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The job's ID (job_…).")
        var jobID: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            try await JobsCommand.follow(jobID, client: client, options: options, context: context)
        }
    }

    struct Cancel: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancels a pending or running job; a running one stops after the sends in flight."
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The job's ID (job_…).")
        var jobID: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [jobID] in
                try await $0.cancelJob(path: .init(jobID: jobID)).ok.body.json
            }
            output(response, in: context) { "Cancelled job \($0.id)\n\n" + JobsCommand.details($0) }
        }
    }

    struct ResendUncertain: ClientCommand {
        static let configuration = CommandConfiguration(
            commandName: "resend-uncertain",
            abstract: "Sends a finished start job's uncertain tokens the start again, as a new job.",
            discussion: """
                An uncertain start was written to APNs and got no answer: the device may or may not \
                show the activity. This starts a new job whose audience is exactly the job's \
                uncertain tokens, through the start ledger (a token started since is not sent \
                again). A device that did get the first start shows the activity twice: resend when \
                missing the start is worse. One resend per job: asking again answers the same job. \
                With --follow, exits as `marquee jobs follow` does.
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The finished start job's ID (job_…).")
        var jobID: String

        @Flag(inversion: .prefixedNo, help: "Follow the new job live (default: when standard error is a terminal).")
        var follow: Bool?

        @Option(
            name: .customLong("idempotency-key"),
            help: "Sent as Idempotency-Key: a repeat with the same key answers the same job."
        )
        var idempotencyKey: String?

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [jobID, idempotencyKey] in
                try await $0.resendUncertainStarts(
                    path: .init(jobID: jobID),
                    headers: .init(idempotencyKey: idempotencyKey)
                ).accepted.body.json
            }
            try await followOrPrint(
                response,
                follow: follow,
                client: client,
                context: context,
                saying: "Resending the uncertain starts in job",
                devices: "to"
            )
        }
    }

    /// Follows the job to its end, drawing progress when standard error is a terminal, then prints
    /// the summary (or, with --json, the final job as the server sent it) and exits by its outcome.
    static func follow(_ jobID: String, client: MarqueeClient, options: ClientOptions, context: CLIContext) async throws
    {
        var bar = ProgressBar(output: context.standardError, enabled: context.standardErrorIsTerminal)
        let job = try await JobFollower(client: client).follow(jobID) { bar.draw(JobProgress.line($0)) }
        bar.finish(JobProgress.line(job))
        if options.json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.dateEncodingStrategy = .iso8601
            context.print(String(decoding: try encoder.encode(job), as: UTF8.self))
        } else {
            context.print(JobProgress.summary(job))
        }
        let code = JobProgress.exitCode(job)
        if code != .ok { throw ExitCode(code.rawValue) }
    }

    static func details(_ job: Components.Schemas.Job) -> String {
        let progress = job.progress
        var pairs = [
            ("ID", job.id), ("Kind", job.kind), ("State", job.state.rawValue), ("Event", job.eventKey ?? "-"),
            ("Environment", job.environment?.rawValue ?? "-"),
            ("Progress", JobProgress.line(job)),
            ("Accepted", Formatting.count(progress.accepted)), ("Failed", Formatting.count(progress.failed)),
            ("Uncertain", Formatting.count(progress.uncertain)),
            ("Tokens retired", Formatting.count(progress.tokensRetired)), ("Attempts", String(job.attempts)),
            ("Created", Formatting.date(job.createdAt)), ("Updated", Formatting.date(job.updatedAt)),
        ]
        if let confirmation = job.confirmation {
            pairs.append(("Confirmation", JobProgress.confirmation(confirmation)))
        }
        if let error = job.lastError { pairs.append(("Last error", error)) }
        var text = Table.details(pairs)
        if let hint = JobProgress.uncertainHint(job) { text += "\n\n" + hint }
        if !progress.failures.isEmpty {
            var table = Table("outcome", "reason", "count")
            for failure in progress.failures {
                table.append(failure.outcome.rawValue, failure.reason ?? "-", Formatting.count(failure.count))
            }
            text += "\n\n" + table.text
        }
        return text
    }
}
