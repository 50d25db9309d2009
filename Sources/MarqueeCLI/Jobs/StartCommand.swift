import ArgumentParser
import Foundation
import MarqueeClient
import OpenAPIRuntime

/// `marquee start EVENT`: starts the event's Live Activity on every device of an audience, as a
/// job, and follows it.
struct StartCommand: ClientCommand {
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Starts an event's Live Activity on an audience's devices, as a job, and follows it.",
        discussion: """
            Sends a push-to-start to every push-to-start token of the event's attributes type in \
            the environment (or those with --tag, --user-id or --token). Prints the job's ID; with \
            --follow (the default when standard error is a terminal) shows a live progress bar \
            (sent, failed, uncertain, rate, time left) and exits by the job's outcome: 0 when every \
            delivery was accepted, 7 when some failed or are uncertain (`marquee jobs \
            resend-uncertain` sends those again), 5 when the job was cancelled, 6 when it failed.
            """
    )

    @OptionGroup var options: ClientOptions

    @Argument(help: "The event's key.")
    var eventKey: String

    @Option(help: "The environment to start in.")
    var environment: Components.Schemas.Environment

    @Option(help: ArgumentHelp("The ActivityKit attributes as JSON, or @file.", valueName: "json|@file"))
    var attributes: String

    @Option(
        name: .customLong("content-state"),
        help: ArgumentHelp("The initial content-state as JSON, or @file.", valueName: "json|@file")
    )
    var contentState: String

    @Option(name: .customLong("alert-title"), help: "The alert's title (a start needs an alert).")
    var alertTitle: String?

    @Option(name: .customLong("alert-body"), help: "The alert's body.")
    var alertBody: String?

    @Option(name: .customLong("alert-sound"), help: "The alert's sound, e.g. default.")
    var alertSound: String?

    @Option(
        name: .customLong("alert"),
        help: ArgumentHelp("APNs' whole alert object as JSON or @file.", valueName: "json|@file")
    )
    var alert: String?

    @Option(name: .customLong("tag"), help: "Only tokens with this tag (repeatable; any of them).")
    var tags: [String] = []

    @Option(name: .customLong("user-id"), help: "Only tokens of this user (repeatable).")
    var userIDs: [String] = []

    @Option(name: .customLong("token"), help: "Only this token (repeatable).")
    var tokens: [String] = []

    @Flag(
        name: .customLong("input-push-token"),
        help: "Ask every device, iOS 18 too, for an update token instead of the channel."
    )
    var inputPushToken = false

    @Flag(inversion: .prefixedNo, help: "Follow the job live (default: when standard error is a terminal).")
    var follow: Bool?

    @Option(
        name: .customLong("idempotency-key"),
        help: "Sent as Idempotency-Key: a repeat with the same key and body answers the same job."
    )
    var idempotencyKey: String?

    func validate() throws {
        if alert != nil && (alertTitle != nil || alertBody != nil || alertSound != nil) {
            throw ValidationError("give either --alert or --alert-title/--alert-body/--alert-sound")
        }
        if alert == nil && alertTitle == nil && alertBody == nil {
            throw ValidationError("a start shows an alert: give --alert-title and --alert-body (or --alert)")
        }
    }

    func run(client: MarqueeClient, context: CLIContext) async throws {
        let audience: Components.Schemas.StartAudience? =
            tags.isEmpty && userIDs.isEmpty && tokens.isEmpty
            ? nil
            : .init(
                tags: tags.isEmpty ? nil : tags,
                userIDs: userIDs.isEmpty ? nil : userIDs,
                tokens: tokens.isEmpty ? nil : tokens
            )
        let request = Components.Schemas.StartRequest(
            environment: environment,
            attributes: .init(additionalProperties: try JSONArgument.object(attributes, option: "--attributes")),
            contentState: .init(additionalProperties: try JSONArgument.object(contentState, option: "--content-state")),
            alert: .init(additionalProperties: try alertObject()),
            audience: audience,
            inputPushToken: inputPushToken ? true : nil
        )
        let response = try await client.send { [eventKey, idempotencyKey] in
            // Without `at` the answer is the job; a schedule would be an answer to another request.
            switch try await $0.startEventActivities(
                path: .init(eventKey: eventKey),
                headers: .init(idempotencyKey: idempotencyKey),
                body: .json(request)
            ).accepted.body.json {
            case .Job(let job): job
            case let other: throw UnexpectedOutput(other)
            }
        }
        try await followOrPrint(
            response,
            follow: follow,
            client: client,
            context: context,
            saying: "Started job",
            devices: "for"
        )
    }

    private func alertObject() throws(CLIFailure) -> OpenAPIObjectContainer {
        if let alert { return try JSONArgument.object(alert, option: "--alert") }
        var fields: [String: (any Sendable)?] = [:]
        if let alertTitle { fields["title"] = alertTitle }
        if let alertBody { fields["body"] = alertBody }
        if let alertSound { fields["sound"] = alertSound }
        return try JSONArgument.object(fields, describing: "alert")
    }
}
