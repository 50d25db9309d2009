import ArgumentParser
import Foundation
import MarqueeClient
import OpenAPIRuntime

/// `marquee broadcast EVENT`: an update or the end, to every channel of the event at once.
struct BroadcastCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "broadcast",
        abstract: "Broadcasts an update or the end of an event's Live Activity to its channels.",
        discussion: """
            One APNs request per environment of the event. The priority comes from --priority, \
            else the event's or the server's policy (10 for --important updates and those with an \
            alert, within an hourly budget). Exit code 7 when APNs accepted the broadcast in some \
            environments only: retry those that failed with --environment. An end broadcast does \
            not close the event: `marquee events close` does.
            """
    )

    @OptionGroup var options: ClientOptions

    @Argument(help: "The event's key.")
    var eventKey: String

    @Option(name: .customLong("event-type"), help: "update or end.")
    var eventType: Components.Schemas.BroadcastEvent

    @Option(
        name: .customLong("content-state"),
        help: ArgumentHelp(
            "The activity's content-state as JSON, or @file (@- for standard input).",
            valueName: "json|@file"
        )
    )
    var contentState: String

    @Option(name: .customLong("alert-title"), help: "An alert's title (with --alert-body).")
    var alertTitle: String?

    @Option(name: .customLong("alert-body"), help: "An alert's body.")
    var alertBody: String?

    @Option(name: .customLong("alert-sound"), help: "An alert's sound, e.g. default.")
    var alertSound: String?

    @Option(
        name: .customLong("alert"),
        help: ArgumentHelp(
            "APNs' whole alert object as JSON or @file, for localized alerts (instead of --alert-title/--alert-body).",
            valueName: "json|@file"
        )
    )
    var alert: String?

    @Option(name: .customLong("stale-date"), help: "When the content goes stale, RFC 3339.")
    var staleDate: RFC3339Date?

    @Option(
        name: .customLong("dismissal-date"),
        help: "With end: when the ended activity leaves the Lock Screen, RFC 3339."
    )
    var dismissalDate: RFC3339Date?

    @Option(name: .customLong("relevance-score"), help: "The activity's relevance score.")
    var relevanceScore: Double?

    @Option(help: "The apns-priority: 1, 5 or 10 (default: the priority policy).")
    var priority: Int?

    @Flag(help: "Asks for priority 10, within the hourly budget.")
    var important = false

    @Option(
        name: .customLong("environment"),
        help: "Broadcast only in this environment (repeatable; default: all of the event's)."
    )
    var environments: [Components.Schemas.Environment] = []

    @Option(
        name: .customLong("idempotency-key"),
        help: "Sent as Idempotency-Key: a repeat with the same key and body is answered from the first."
    )
    var idempotencyKey: String?

    func validate() throws {
        if let priority, Components.Schemas.BroadcastRequest.PriorityPayload(rawValue: priority) == nil {
            throw ValidationError("--priority must be 1, 5 or 10")
        }
        if alert != nil && (alertTitle != nil || alertBody != nil || alertSound != nil) {
            throw ValidationError("give either --alert or --alert-title/--alert-body/--alert-sound")
        }
        if dismissalDate != nil && eventType != .end {
            throw ValidationError("--dismissal-date goes with --event-type end")
        }
    }

    func run(client: MarqueeClient, context: CLIContext) async throws {
        let request = Components.Schemas.BroadcastRequest(
            event: eventType,
            contentState: try JSONArgument.object(contentState, option: "--content-state"),
            alert: try alertObject(),
            staleDate: staleDate?.date,
            dismissalDate: dismissalDate?.date,
            relevanceScore: relevanceScore,
            priority: priority.flatMap(Components.Schemas.BroadcastRequest.PriorityPayload.init(rawValue:)),
            important: important ? true : nil,
            environments: environments.isEmpty ? nil : environments
        )
        let response = try await client.send { [eventKey, idempotencyKey] in
            try await $0.createBroadcast(
                path: .init(eventKey: eventKey),
                headers: .init(idempotencyKey: idempotencyKey),
                body: .json(request)
            )
            .broadcastResult
        }
        output(response, in: context) { result in
            var table = Table("environment", "status", "priority", "apns request id", "detail")
            for item in result.results {
                var detail: [String] = []
                if item.downgraded == true { detail.append("downgraded from \(item.requestedPriority ?? 10)") }
                if let status = item.httpStatus, item.status == .failed { detail.append("HTTP \(status)") }
                if let reason = item.apnsReason { detail.append(reason) }
                if let reason = item.reason { detail.append(reason) }
                if item.channelDeleted == true { detail.append("channel deleted") }
                table.append(
                    item.environment.rawValue,
                    item.status.rawValue,
                    item.priority.map(String.init) ?? "-",
                    item.apnsRequestID ?? "-",
                    detail.isEmpty ? "-" : detail.joined(separator: "; ")
                )
            }
            return "Broadcast \(result.event.rawValue) to \(result.eventKey)\n\n" + table.text
        }
        if response.status == 207 { throw ExitCode(CLIExitCode.partial.rawValue) }
    }

    private func alertObject() throws(CLIFailure) -> OpenAPIObjectContainer? {
        if let alert { return try JSONArgument.object(alert, option: "--alert") }
        guard alertTitle != nil || alertBody != nil || alertSound != nil else { return nil }
        var fields: [String: (any Sendable)?] = [:]
        if let alertTitle { fields["title"] = alertTitle }
        if let alertBody { fields["body"] = alertBody }
        if let alertSound { fields["sound"] = alertSound }
        return try JSONArgument.object(fields, describing: "alert")
    }
}
