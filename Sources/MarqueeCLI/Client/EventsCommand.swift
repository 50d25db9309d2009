import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee events`: events and their broadcast channels, by the producer's own event key.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Create or update, list, show, close and delete events (with a publisher key).",
        subcommands: [Put.self, List.self, Show.self, Close.self, Delete.self]
    )
}

extension EventsCommand {
    struct Put: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Creates an event with its channels at APNs, or updates it; safe to repeat.",
            discussion: """
                A new event gets one broadcast channel per environment, created at APNs once. On an \
                existing event the title, planned times and priority policy may change and \
                environments may be added.
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "Your key for the event (letters, digits, . _ - :), e.g. ars-che-2026-11-28.")
        var eventKey: String

        @Option(help: "The event's title.")
        var title: String

        @Option(name: .customLong("attributes-type"), help: "The ActivityKit attributes type of its Live Activities.")
        var attributesType: String

        @Option(name: .customLong("environment"), help: "An environment to create a channel in (repeatable).")
        var environments: [Components.Schemas.Environment] = []

        @Option(name: .customLong("planned-start"), help: "RFC 3339, e.g. 2026-11-28T15:00:00Z.")
        var plannedStart: RFC3339Date

        @Option(name: .customLong("planned-end"), help: "RFC 3339, e.g. 2026-11-28T17:00:00Z.")
        var plannedEnd: RFC3339Date

        @Option(
            name: .customLong("storage-policy"),
            help: "APNs' message storage for its channels (fixed once created)."
        )
        var storagePolicy: Components.Schemas.StoragePolicy?

        @Option(
            name: .customLong("priority-policy"),
            help: "How broadcasts choose apns-priority (default: the server's)."
        )
        var priorityPolicy: Components.Schemas.PriorityPolicy?

        func validate() throws {
            if environments.isEmpty { throw ValidationError("name at least one --environment (sandbox or production)") }
        }

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let request = Components.Schemas.PutEventRequest(
                title: title,
                attributesType: attributesType,
                environments: environments,
                storagePolicy: storagePolicy,
                priorityPolicy: priorityPolicy,
                plannedStart: plannedStart.date,
                plannedEnd: plannedEnd.date
            )
            let response = try await client.send { [eventKey] in
                switch try await $0.putEvent(path: .init(eventKey: eventKey), body: .json(request)) {
                case .created(let created): (try created.body.json, true)
                case .ok(let ok): (try ok.body.json, false)
                case let other: throw UnexpectedOutput(other)
                }
            }
            output(response, in: context) { event, created in
                "\(created ? "Created" : "Updated") event \(event.eventKey)\n\n" + EventsCommand.details(event)
            }
        }
    }

    struct List: ClientCommand {
        static let configuration = CommandConfiguration(abstract: "Lists the app's events in event-key order.")

        @OptionGroup var options: ClientOptions
        @OptionGroup var page: PageOptions

        @Option(help: "Only events in this state.")
        var state: Components.Schemas.EventState?

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let query = Operations.ListEvents.Input.Query(state: state, limit: page.limit, after: page.after)
            let response = try await client.send { try await $0.listEvents(query: query).ok.body.json }
            output(response, in: context) { list in
                var table = Table("event key", "title", "state", "environments", "planned start", "planned end")
                for event in list.events {
                    table.append(
                        event.eventKey,
                        event.title,
                        event.state.rawValue,
                        Formatting.list(event.environments.map(\.rawValue)),
                        Formatting.date(event.plannedStart),
                        Formatting.date(event.plannedEnd)
                    )
                }
                return table.text
            }
            PageOptions.hint(nextCursor: response.value.nextCursor, json: options.json, in: context)
        }
    }

    struct Show: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Shows an event with its channels and its delivery funnel per environment."
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The event's key.")
        var eventKey: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [eventKey] in
                try await $0.getEvent(path: .init(eventKey: eventKey)).ok.body.json
            }
            output(response, in: context) { EventsCommand.details($0) }
        }
    }

    struct Close: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Ends an event and deletes its channels at APNs; the event stays readable."
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The event's key.")
        var eventKey: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [eventKey] in
                try await $0.closeEvent(path: .init(eventKey: eventKey)).ok.body.json
            }
            output(response, in: context) { "Closed event \($0.eventKey)\n\n" + EventsCommand.details($0) }
        }
    }

    struct Delete: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deletes an event and its channels at APNs.",
            discussion:
                """
                When APNs cannot be reached for some channel, the event is cancelled and the server finishes the \
                deletion later.
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The event's key.")
        var eventKey: String

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { [eventKey] in
                switch try await $0.deleteEvent(path: .init(eventKey: eventKey)) {
                case .noContent: nil as Components.Schemas.Event?
                case .accepted(let accepted): try accepted.body.json
                case let other: throw UnexpectedOutput(other)
                }
            }
            if options.json, response.json == nil {
                context.printJSON(["deleted": eventKey])
                return
            }
            output(response, in: context) { event in
                guard event != nil else { return "Deleted event \(eventKey) and its channels" }
                return
                    """
                    Event \(eventKey) is cancelled; the server deletes its remaining channels at APNs in the \
                    background
                    """
            }
        }
    }

    static func details(_ event: Components.Schemas.Event) -> String {
        var pairs = [
            ("Event key", event.eventKey), ("ID", event.id), ("Title", event.title), ("State", event.state.rawValue),
            ("Attributes type", event.attributesType),
            ("Environments", Formatting.list(event.environments.map(\.rawValue))),
            ("Storage policy", event.storagePolicy.rawValue),
        ]
        if let policy = event.priorityPolicy { pairs.append(("Priority policy", policy.rawValue)) }
        pairs += [
            ("Planned", "\(Formatting.date(event.plannedStart)) – \(Formatting.date(event.plannedEnd))"),
            ("Updated", Formatting.date(event.updatedAt)),
        ]
        var text = Table.details(pairs)
        if !event.channels.isEmpty {
            text += "\n\n" + ChannelsCommand.table(event.channels)
        }
        if let funnel = event.funnel, !funnel.isEmpty {
            text += "\n\n" + funnelTable(funnel)
        }
        return text
    }

    /// The delivery funnel per environment (`marquee events show`), then the rejections by APNs'
    /// reason where there are any.
    static func funnelTable(_ funnels: [Components.Schemas.EventFunnel]) -> String {
        var table = Table(
            "funnel",
            "targeted",
            "sent",
            "accepted",
            "rejected",
            "uncertain",
            "failed",
            "showing",
            "absent",
            "ended",
            "late joiners started",
            "absent then started"
        )
        for funnel in funnels {
            table.append(
                funnel.environment.rawValue,
                "\(funnel.targeted)",
                "\(funnel.sent)",
                "\(funnel.accepted)",
                "\(funnel.rejected.devices)",
                "\(funnel.uncertain)",
                "\(funnel.failed)",
                "\(funnel.confirmedShowing)",
                "\(funnel.absent)",
                "\(funnel.ended)",
                "\(funnel.lateJoinersStarted)",
                "\(funnel.absentThenStarted)"
            )
        }
        var text = table.text
        for funnel in funnels where !funnel.rejected.byReason.additionalProperties.isEmpty {
            let reasons = funnel.rejected.byReason.additionalProperties.sorted { $0.key < $1.key }.map {
                "\($0.key) \($0.value)"
            }
            text += "\nRejected in \(funnel.environment.rawValue): " + reasons.joined(separator: ", ")
        }
        return text
    }
}
