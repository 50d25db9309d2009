import Foundation
import Logging
import MarqueeCore
import ServiceLifecycle

/// A replica's late-join pump: drains the pending-start queue that token registrations fill while
/// events are live, at `LateJoinConfiguration.ratePerSecond` at most (`LateJoinRate`), each claimed
/// group of one event and environment sent as one start job (`StartService.startLateJoiners`), so
/// that the start ledger, uncertain handling, crash resumption and lease fencing hold as for any
/// start. Replicas share the queue (claims with `FOR UPDATE SKIP LOCKED` on PostgreSQL); woken at
/// once by a registration (here, or NOTIFY from another replica), polling otherwise.
public struct LateJoinPump: Service {
    let store: any PendingStartStore
    let starts: StartService
    let configuration: LateJoinConfiguration
    let wakeup: JobWakeup
    let clock: any WallClock
    let logger: Logger
    let owner = "\(ProcessInfo.processInfo.hostName)/late-join/\(UUID.random().uuidString.prefix(8).lowercased())"

    public func run() async throws {
        await wakeup.runUntilStopped { stop in
            var rate = LateJoinRate(ratePerSecond: configuration.ratePerSecond, now: clock.now)
            var prunedAt: Date?
            while !stop.isRaised {
                let pause = await drainOnce(&rate, prunedAt: &prunedAt)
                if pause > .zero && !stop.isRaised { await wakeup.wait(timeout: pause) }
            }
        }
    }

    /// One pass: prunes what will never be sent (once per poll interval at most: a pruning reads
    /// the whole queue, which a storm makes long), claims what the rate allows and starts it.
    /// Returns how long to wait before the next pass (zero: at once, the queue may hold more).
    func drainOnce(_ rate: inout LateJoinRate, prunedAt: inout Date?) async -> Duration {
        do {
            let now = clock.now
            if prunedAt.map({ now.timeIntervalSince($0) >= configuration.pollInterval.timeInterval }) ?? true {
                let pruned = try await store.prunePendingStarts()
                prunedAt = now
                if pruned > 0 { logger.debug("pending starts pruned", metadata: ["late_joiners.pruned": "\(pruned)"]) }
            }
            let allowance = min(rate.allowance(now: now), configuration.batchSize)
            guard allowance > 0 else { return max(rate.wait(now: now), .milliseconds(1)) }
            let claimOwner = "\(owner)/\(UUID.random().uuidString.prefix(8).lowercased())"
            let claims = try await store.claimPendingStarts(
                owner: claimOwner,
                now: now,
                until: now.addingTimeInterval(configuration.claimDuration.timeInterval),
                limit: allowance
            )
            rate.spend(claims.count, now: now)
            for group in Self.groups(claims) {
                do {
                    _ = try await starts.startLateJoiners(group, owner: claimOwner)
                } catch {
                    // The claim lapses and another pass (here or on another replica) takes the rows again.
                    logger.warning(
                        "starting late joiners failed; they are tried again when their claim lapses",
                        metadata: [
                            "event.id": "\(group[0].eventID)", "count": "\(group.count)",
                            "error": "\(String(reflecting: error))",
                        ]
                    )
                }
            }
            return claims.count == allowance ? .zero : configuration.pollInterval
        } catch {
            logger.warning("the late-join queue could not be read", metadata: ["error": "\(String(reflecting: error))"])
            return configuration.pollInterval
        }
    }

    /// The claims by event, environment and reason (and the start an `absent` one makes up for),
    /// in the order of their oldest: each group is one start job.
    static func groups(_ claims: [PendingStart]) -> [[PendingStart]] {
        struct Key: Hashable {
            var eventID: EventID
            var environment: APNSEnvironment
            var reason: PendingStartReason
            var sourceJobID: JobID?
        }
        var order: [Key] = []
        var byKey: [Key: [PendingStart]] = [:]
        for claim in claims {
            let key = Key(
                eventID: claim.eventID,
                environment: claim.environment,
                reason: claim.reason,
                sourceJobID: claim.sourceJobID
            )
            if byKey[key] == nil { order.append(key) }
            byKey[key, default: []].append(claim)
        }
        return order.compactMap { byKey[$0] }
    }
}
