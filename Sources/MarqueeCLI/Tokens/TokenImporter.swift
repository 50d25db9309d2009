import Foundation
import MarqueeClient
import MarqueeCore

/// Streams a token file to the batch registration endpoint: reads it line by line, sends batches
/// of `batchSize` valid rows, and reports every refused row by its line number, whether the file
/// refused it (shape, missing fields) or the server did (a 422 naming `/tokens/N/...`: those
/// rows are dropped and the rest of the batch is sent again, since a batch is all or none).
struct TokenImporter {
    typealias Item = Components.Schemas.PushToStartTokenBatchItem

    struct Rejection: Sendable, Equatable {
        var line: Int
        var field: String
        var detail: String

        var description: String { "line \(line): " + (field.isEmpty ? detail : "\(field): \(detail)") }
    }

    struct Progress: Sendable {
        var bytesRead: Int64
        var totalBytes: Int64?
        var rows: Int
        var registered: Int
        var rejected: Int
        var elapsed: Duration

        var tokensPerSecond: Double {
            let seconds = elapsed.timeInterval
            return seconds > 0 ? Double(registered) / seconds : 0
        }
    }

    struct Summary: Sendable {
        var progress: Progress
        /// The first rejections (all are counted in `progress.rejected`).
        var rejections: [Rejection]
        /// Why the import stopped before the end of the file, and the first line not imported.
        var failure: (error: MarqueeClientError, line: Int)?
    }

    let client: MarqueeClient
    let batchSize: Int
    /// Parse and check only; send nothing.
    let dryRun: Bool
    /// Rejections kept for the summary; the rest are only counted.
    var keptRejections = 10_000
    /// Seconds to wait before each retry of a batch the server could not take (unreachable, 429,
    /// 502–504); the same idempotency key is sent again.
    var retryDelays: [Duration] = [.seconds(1), .seconds(2), .seconds(4)]

    /// Imports everything `reader` yields. `onRejection` hears each refused row as it is found,
    /// `onProgress` each batch sent.
    func run(
        reader: inout LineReader,
        parser: inout TokenRowParser,
        totalBytes: Int64?,
        onRejection: (Rejection) -> Void,
        onProgress: (Progress) -> Void
    ) async throws -> Summary {
        let clock = ContinuousClock()
        let started = clock.now
        var progress = Progress(
            bytesRead: 0,
            totalBytes: totalBytes,
            rows: 0,
            registered: 0,
            rejected: 0,
            elapsed: .zero
        )
        var rejections: [Rejection] = []
        var pending: [(line: Int, item: Item)] = []

        func reject(_ rejection: Rejection) {
            progress.rejected += 1
            if rejections.count < keptRejections { rejections.append(rejection) }
            onRejection(rejection)
        }

        /// Sends what is pending; answers the failure that stopped the import, if one did.
        func flush() async -> (error: MarqueeClientError, line: Int)? {
            let outcome = await send(pending)
            pending.removeAll(keepingCapacity: true)
            progress.registered += outcome.registered
            outcome.rejections.forEach(reject)
            progress.elapsed = clock.now - started
            return outcome.failure
        }

        while let line = try reader.next() {
            progress.bytesRead = line.offset
            if line.text.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            if parser.needsHeader {
                try parser.readHeader(line.text)
                continue
            }
            progress.rows += 1
            if line.truncated {
                reject(Rejection(line: line.number, field: "", detail: "line too long"))
                continue
            }
            switch parser.item(line.text) {
            case .success(let item): pending.append((line.number, item))
            case .failure(let error): reject(Rejection(line: line.number, field: error.field, detail: error.detail))
            }
            if pending.count >= batchSize {
                if let failure = await flush() {
                    return Summary(progress: progress, rejections: rejections, failure: failure)
                }
                onProgress(progress)
            }
        }
        if !pending.isEmpty, let failure = await flush() {
            return Summary(progress: progress, rejections: rejections, failure: failure)
        }
        progress.elapsed = clock.now - started
        onProgress(progress)
        return Summary(progress: progress, rejections: rejections, failure: nil)
    }

    /// What became of one batch.
    private struct Outcome {
        var registered = 0
        var rejections: [Rejection] = []
        /// The error and first line of the rows the server could not take at all.
        var failure: (error: MarqueeClientError, line: Int)?
    }

    /// Sends the rows, dropping those the server refuses, until the rest is registered.
    private func send(_ rows: [(line: Int, item: Item)]) async -> Outcome {
        var outcome = Outcome()
        var batch = rows
        if dryRun {
            outcome.registered = batch.count
            return outcome
        }
        while !batch.isEmpty {
            do {
                outcome.registered += try await register(batch.map(\.item))
                return outcome
            } catch let error where error.status == 422 {
                let refused = Self.refusedRows(error.fieldErrors, batchCount: batch.count)
                // A refusal that names no row of the batch cannot be narrowed down: stop there.
                guard !refused.isEmpty else {
                    outcome.failure = (error, batch[0].line)
                    return outcome
                }
                for (index, errors) in refused.sorted(by: { $0.key < $1.key }) {
                    outcome.rejections.append(
                        Rejection(
                            line: batch[index].line,
                            field: errors.map(\.field).joined(separator: ", "),
                            detail: errors.map(\.detail).joined(separator: "; ")
                        )
                    )
                }
                batch = batch.enumerated().filter { refused[$0.offset] == nil }.map(\.element)
            } catch {
                outcome.failure = (error, batch[0].line)
                return outcome
            }
        }
        return outcome
    }

    /// One batch, retried with the same idempotency key while the server is unavailable.
    private func register(_ items: [Item]) async throws(MarqueeClientError) -> Int {
        let body = Components.Schemas.PushToStartTokenBatch(tokens: items)
        let key = "mq-import-" + UUID().lowercasedText
        var attempt = 0
        while true {
            do {
                return try await client.send {
                    try await $0.registerPushToStartTokens(headers: .init(idempotencyKey: key), body: .json(body)).ok
                        .body.json.registered
                }.value
            } catch {
                guard Self.isTransient(error), attempt < retryDelays.count else { throw error }
                do {
                    try await Task.sleep(for: retryDelays[attempt])
                } catch {
                    throw MarqueeClientError(kind: .cancelled, title: "cancelled")
                }
                attempt += 1
            }
        }
    }

    static func isTransient(_ error: MarqueeClientError) -> Bool {
        error.kind == .unreachable || [429, 502, 503, 504].contains(error.status ?? 0)
    }

    /// Field errors by the batch index their pointer names (`/tokens/7/token` → 7: `token`).
    static func refusedRows(
        _ errors: [MarqueeClientError.FieldError],
        batchCount: Int
    ) -> [Int: [(field: String, detail: String)]] {
        var rows: [Int: [(field: String, detail: String)]] = [:]
        for error in errors {
            let parts = error.pointer.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count >= 3, parts[0].isEmpty, parts[1] == "tokens", let index = Int(parts[2]),
                (0..<batchCount).contains(index)
            else {
                continue
            }
            rows[index, default: []].append((parts.dropFirst(3).joined(separator: "/"), error.detail))
        }
        return rows
    }
}
