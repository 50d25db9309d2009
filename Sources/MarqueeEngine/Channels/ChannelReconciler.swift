import Foundation
import Logging
import MarqueeAPNS
import MarqueeCore

/// Compares Marquee's channels with APNs' list of all the app's channels in an environment and
/// repairs the difference: unknown channels become `orphaned` rows (deleted at APNs after the
/// grace period, or at once when asked), active channels APNs no longer lists become `deleted`.
public struct ChannelReconciler: Sendable {
    let store: any ChannelStore
    let clients: APNSClientRegistry
    let lifecycle: ChannelLifecycle
    let policy: ChannelPolicy
    let clock: any WallClock
    let logger: Logger

    /// What one reconciliation found and did.
    public struct Report: Sendable, Hashable {
        public var environment: APNSEnvironment
        /// How many channels APNs listed.
        public var apnsChannels: Int
        /// APNs IDs no row knew, now recorded as orphans.
        public var orphansRecorded: [String]
        /// APNs IDs of orphans deleted at APNs.
        public var orphansDeleted: [String]
        /// Marquee channels APNs no longer lists, now `deleted`.
        public var markedDeleted: [ChannelID]
        /// Active channels APNs lists as it should.
        public var unchanged: Int
    }

    public func reconcile(app: App, environment: APNSEnvironment, deleteOrphans: Bool) async throws -> Report {
        let startedAt = clock.now
        let client = try await clients.client(for: app, environment: environment)
        let listed: Set<String>
        do {
            listed = Set(try await client.listChannels(bundleID: app.bundleID))
        } catch {
            throw EngineError(apns: error, bundleID: app.bundleID)
        }
        let rows = try await store.channels(appID: app.id, environment: environment, states: Set(ChannelState.allCases))
        var known: [String: BroadcastChannel] = [:]
        for row in rows {
            if let id = row.apnsChannelID, known[id] == nil || row.state != .deleted { known[id] = row }
        }
        var report = Report(
            environment: environment,
            apnsChannels: listed.count,
            orphansRecorded: [],
            orphansDeleted: [],
            markedDeleted: [],
            unchanged: 0
        )
        var orphans = rows.filter { $0.state == .orphaned }

        for apnsID in listed.sorted() {
            guard let row = known[apnsID] else {
                let orphan = try await store.recordOrphanedChannel(
                    appID: app.id,
                    environment: environment,
                    apnsChannelID: apnsID,
                    storagePolicy: .mostRecentMessageStored,
                    at: clock.now
                )
                if orphan.state == .orphaned {
                    report.orphansRecorded.append(apnsID)
                    orphans.append(orphan)
                }
                continue
            }
            switch row.state {
            case .active:
                report.unchanged += 1
            case .deleted:
                // Deleted in Marquee's record, still at APNs: finish the deletion.
                if try await deleteAtAPNS(apnsID, app: app, client: client) { report.orphansDeleted.append(apnsID) }
            default:
                break
            }
        }

        for row in rows where row.state == .active {
            guard let apnsID = row.apnsChannelID, !listed.contains(apnsID), row.updatedAt < startedAt else { continue }
            // Deleted outside Marquee (or by APNs). Rows activated after the list was read are left alone.
            _ = try await store.transitionChannel(appID: app.id, id: row.id, to: .deleted, at: clock.now)
            report.markedDeleted.append(row.id)
        }

        let creationInFlight = rows.contains { $0.state == .creating && !policy.isAbandoned($0, now: clock.now) }
        for orphan in orphans {
            // An orphan may be a channel whose creation is being recorded right now: only the grace
            // period, or an explicit request while no creation is in flight, lets it go.
            let due = policy.orphanIsDue(orphan, now: clock.now) || (deleteOrphans && !creationInFlight)
            guard due, let apnsID = orphan.apnsChannelID else { continue }
            if try await lifecycle.deleteChannel(app: app, channel: orphan) { report.orphansDeleted.append(apnsID) }
        }
        logger.debug(
            "channels reconciled",
            metadata: [
                "app.id": "\(app.id)", "apns.environment": "\(environment)",
                "orphans.recorded": "\(report.orphansRecorded.count)",
                "channels.marked_deleted": "\(report.markedDeleted.count)",
            ]
        )
        return report
    }

    private func deleteAtAPNS(_ apnsID: String, app: App, client: any APNSChannelManaging) async throws -> Bool {
        do {
            try await client.deleteChannel(bundleID: app.bundleID, channelID: apnsID)
            return true
        } catch {
            switch error.failureClass {
            case .channelGone: return true
            case .retryLater, .renewTokenAndRetry, .uncertain: return false
            default: throw EngineError(apns: error, bundleID: app.bundleID)
            }
        }
    }
}
