import ArgumentParser
import Foundation
import MarqueeClient

/// `marquee channels`: broadcast channels at APNs, their IDs per environment, the quota and
/// reconciliation with APNs' own list.
struct ChannelsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "channels",
        abstract: "List channels, show an event's channel IDs, check the quota, reconcile with APNs.",
        subcommands: [List.self, Show.self, Quota.self, Reconcile.self]
    )
}

extension ChannelsCommand {
    struct List: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Lists the app's channels with their state, oldest first."
        )

        @OptionGroup var options: ClientOptions
        @OptionGroup var page: PageOptions

        @Option(help: "Only channels in this environment.")
        var environment: Components.Schemas.Environment?

        @Option(help: "Only channels in this state.")
        var state: Components.Schemas.ChannelState?

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let query = Operations.ListChannels.Input.Query(
                environment: environment,
                state: state,
                limit: page.limit,
                after: page.after
            )
            let response = try await client.send { try await $0.listChannels(query: query).ok.body.json }
            output(response, in: context) { ChannelsCommand.table($0.channels) }
            PageOptions.hint(nextCursor: response.value.nextCursor, json: options.json, in: context)
        }
    }

    struct Show: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Shows an event's channel ID in each environment: what the app passes to ActivityKit.",
            discussion: """
                With --environment, reads the channel the way apps and app backends do (an app key \
                is enough; the answer is cacheable).
                """
        )

        @OptionGroup var options: ClientOptions

        @Argument(help: "The event's key.")
        var eventKey: String

        @Option(help: "Only this environment.")
        var environment: Components.Schemas.Environment?

        func run(client: MarqueeClient, context: CLIContext) async throws {
            if let environment {
                let response = try await client.send { [eventKey] in
                    try await $0.getEventChannel(path: .init(eventKey: eventKey, environment: environment)).ok.body.json
                }
                output(response, in: context) { channel in
                    var table = Table("environment", "channel id", "state", "storage policy")
                    table.append(
                        channel.environment.rawValue,
                        channel.channelID,
                        channel.state.rawValue,
                        channel.storagePolicy.rawValue
                    )
                    return table.text
                }
            } else {
                // One channel read per environment, as an app reads them (an app key may not read
                // the event itself); an environment without a live channel answers 404 and is left out.
                var channels: [Components.Schemas.EventChannel] = []
                var documents: [String] = []
                for environment in Components.Schemas.Environment.allCases {
                    do {
                        let response = try await client.send { [eventKey] in
                            try await $0.getEventChannel(path: .init(eventKey: eventKey, environment: environment)).ok
                                .body.json
                        }
                        channels.append(response.value)
                        documents.append(response.json.map { String(decoding: $0, as: UTF8.self) } ?? "{}")
                    } catch {
                        let status = error.status
                        guard status == 404 else { throw error }
                    }
                }
                if options.json {
                    context.print("{\"channels\":[" + documents.joined(separator: ",") + "]}")
                } else if channels.isEmpty {
                    context.print("Event \(eventKey) has no live channel")
                } else {
                    var table = Table("environment", "channel id", "state", "storage policy")
                    for channel in channels {
                        table.append(
                            channel.environment.rawValue,
                            channel.channelID,
                            channel.state.rawValue,
                            channel.storagePolicy.rawValue
                        )
                    }
                    context.print(table.text)
                }
            }
        }
    }

    struct Quota: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Channels counted against Apple's cap, per environment."
        )

        @OptionGroup var options: ClientOptions

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let response = try await client.send { try await $0.getChannelQuota().ok.body.json }
            output(response, in: context) { list in
                var table = Table("environment", "used", "limit", "warning at", "warning")
                for quota in list.quotas {
                    table.append(
                        quota.environment.rawValue,
                        Formatting.count(quota.used),
                        Formatting.count(quota.limit),
                        Formatting.count(quota.warningAt),
                        quota.warning ? "YES" : "no"
                    )
                }
                return table.text
            }
        }
    }

    struct Reconcile: ClientCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compares Marquee's channels with APNs' list and repairs the difference.",
            discussion: """
                Channels APNs has that Marquee does not know are recorded as orphaned (deleted at \
                APNs after a grace period, or now with --delete-orphans); active channels APNs no \
                longer lists are marked deleted and recreated for open events.
                """
        )

        @OptionGroup var options: ClientOptions

        @Option(help: "The environment to reconcile.")
        var environment: Components.Schemas.Environment

        @Flag(name: .customLong("delete-orphans"), help: "Delete unknown channels at APNs now.")
        var deleteOrphans = false

        func run(client: MarqueeClient, context: CLIContext) async throws {
            let request = Components.Schemas.ReconcileRequest(
                environment: environment,
                deleteOrphans: deleteOrphans ? true : nil
            )
            let response = try await client.send { try await $0.reconcileChannels(body: .json(request)).ok.body.json }
            output(response, in: context) { report in
                var pairs = [
                    ("Environment", report.environment.rawValue),
                    ("APNs lists", Formatting.count(report.apnsChannels)),
                    ("Unchanged", Formatting.count(report.unchanged)),
                    ("Orphans recorded", Formatting.count(report.orphansRecorded.count)),
                    ("Orphans deleted", Formatting.count(report.orphansDeleted.count)),
                    ("Marked deleted", Formatting.count(report.markedDeleted.count)),
                ]
                for id in report.orphansRecorded { pairs.append(("  orphan", id)) }
                for id in report.orphansDeleted { pairs.append(("  deleted orphan", id)) }
                for id in report.markedDeleted { pairs.append(("  gone at APNs", id)) }
                return Table.details(pairs)
            }
        }
    }

    /// Channels as a table, shared with `events show`.
    static func table(_ channels: [Components.Schemas.Channel]) -> String {
        var table = Table("id", "event", "environment", "state", "channel id", "storage policy", "created")
        for channel in channels {
            table.append(
                channel.id,
                channel.eventKey ?? "(orphan)",
                channel.environment.rawValue,
                channel.state.rawValue,
                channel.channelID ?? "-",
                channel.storagePolicy.rawValue,
                Formatting.date(channel.createdAt)
            )
        }
        return table.text
    }
}
