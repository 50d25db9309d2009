import ArgumentParser
import Foundation
import MarqueeClient
import MarqueeCore

extension TokensCommand {
    /// `marquee tokens import FILE`: a file of tokens of any size, streamed in batches.
    struct Import: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Registers push-to-start tokens from a CSV or JSON Lines file, in batches.",
            discussion: """
                CSV: a header row naming the columns token, environment, attributesType, deviceID, \
                userID, tags (separated by ; or ,), iosVersion, frequentPushesEnabled; only token \
                is required. JSON Lines: one object per line with the same fields (tags an array). \
                --environment and --attributes-type fill in rows that leave them out.

                The file is read line by line and sent in batches to POST \
                /v1/push-to-start-tokens/batch. Rows the file or the server refuses are reported \
                with their line number and skipped; the rest are registered. A batch the server \
                cannot take (unreachable, 429, 5xx) is retried three times, then the import stops \
                and says at which line. A progress bar is drawn on standard error when it is a \
                terminal. Exit code 7 when some rows were refused, 5 when all were.
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(
            help: "The file (- for standard input, with --format).",
            completion: .file(extensions: ["csv", "jsonl", "ndjson"])
        )
        var file: String

        @Option(help: "csv or jsonl (default: from the extension: .csv; .jsonl, .ndjson, .json).")
        var format: TokenFileFormat?

        @Option(name: .customLong("batch-size"), help: "Tokens per request, 1–10000.")
        var batchSize = 1000

        @Option(help: "The environment of rows that name none.")
        var environment: Components.Schemas.Environment?

        @Option(name: .customLong("attributes-type"), help: "The attributes type of rows that name none.")
        var attributesType: String?

        @Flag(name: .customLong("dry-run"), help: "Read and check the file; send nothing.")
        var dryRun = false

        /// Rejected rows printed on standard error as they are found; the rest are counted.
        static let shownRejections = 50

        func validate() throws {
            guard (1...10_000).contains(batchSize) else {
                throw ValidationError("--batch-size must be between 1 and 10000 (the server's limit)")
            }
            if format == nil && TokenFileFormat(path: file) == nil {
                throw ValidationError(
                    "cannot tell the format of \(file) from its extension: give --format csv or --format jsonl"
                )
            }
        }

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let format = format ?? TokenFileFormat(path: file) ?? .csv
            let (handle, totalBytes) = try open()
            defer { try? handle.close() }

            var reader = LineReader(handle: handle)
            var parser = TokenRowParser(
                format: format,
                defaults: .init(environment: environment, attributesType: attributesType)
            )
            let importer = TokenImporter(client: client, batchSize: batchSize, dryRun: dryRun)
            var bar = ProgressBar(output: context.standardError, enabled: context.standardErrorIsTerminal)
            var shown = 0

            let summary = try await importer.run(
                reader: &reader,
                parser: &parser,
                totalBytes: totalBytes,
                onRejection: { rejection in
                    shown += 1
                    if shown <= Self.shownRejections {
                        bar.printAbove("rejected \(rejection.description)")
                    } else if shown == Self.shownRejections + 1 {
                        bar.printAbove("(more rejected rows are counted, not shown)")
                    }
                },
                onProgress: { bar.draw(Self.progressLine($0)) }
            )
            bar.finish(Self.progressLine(summary.progress))
            report(summary, context: context)
            if let failure = summary.failure {
                throw ImportStopped(error: failure.error, line: failure.line)
            }
            let progress = summary.progress
            if progress.rejected > 0 {
                throw ExitCode(progress.registered > 0 ? CLIExitCode.partial.rawValue : CLIExitCode.rejected.rawValue)
            }
        }

        private func open() throws(CLIFailure) -> (FileHandle, Int64?) {
            if file == "-" { return (FileHandle.standardInput, nil) }
            guard let handle = FileHandle(forReadingAtPath: file) else { throw .usage("cannot open \(file)") }
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.int64Value
            return (handle, size)
        }

        private func report(_ summary: TokenImporter.Summary, context: CLIContext) {
            let progress = summary.progress
            let seconds = progress.elapsed.timeInterval
            if options.json {
                var object: [String: Any] = [
                    "file": file, "rows": progress.rows, "registered": progress.registered,
                    "rejected": progress.rejected,
                    "seconds": (seconds * 1000).rounded() / 1000, "complete": summary.failure == nil, "dryRun": dryRun,
                    "rejections": summary.rejections.map {
                        ["line": $0.line, "field": $0.field, "detail": $0.detail] as [String: Any]
                    },
                ]
                if let failure = summary.failure { object["stoppedAtLine"] = failure.line }
                context.printJSON(object)
                return
            }
            let verb = dryRun ? "Checked" : "Imported"
            var line =
                """
                \(verb) \(Formatting.count(progress.registered)) tokens from \(file) \
                (\(Formatting.count(progress.rows)) rows
                """
            if progress.rejected > 0 { line += ", \(Formatting.count(progress.rejected)) rejected" }
            line += ") in \(String(format: "%.1f", seconds))s"
            if !dryRun && progress.registered > 0 {
                line += ", \(Formatting.count(Int(progress.tokensPerSecond))) tokens/s"
            }
            context.print(line)
        }

        static func progressLine(_ progress: TokenImporter.Progress) -> String {
            var parts: [String] = []
            if let total = progress.totalBytes, total > 0 {
                parts.append(ProgressBar.bar(Double(progress.bytesRead) / Double(total)))
                parts.append("\(Formatting.bytes(progress.bytesRead)) / \(Formatting.bytes(total))")
            } else {
                parts.append(Formatting.bytes(progress.bytesRead))
            }
            parts.append("\(Formatting.count(progress.registered)) tokens")
            if progress.rejected > 0 { parts.append("\(Formatting.count(progress.rejected)) rejected") }
            parts.append("\(Formatting.count(Int(progress.tokensPerSecond))) tokens/s")
            return parts.joined(separator: "  ")
        }
    }
}

/// An import the server stopped: its error, and where to resume.
struct ImportStopped: Error {
    var error: MarqueeClientError
    var line: Int
}
