import Foundation
import MarqueeCore

extension WallClock {
    /// Sleeps until `deadline` unless `stop` is raised first; returns whether the deadline came
    /// (false: stopped). Throws `CancellationError` if the task is cancelled.
    func sleep(until deadline: Date, unlessRaised stop: RunStop) async throws -> Bool {
        guard !stop.isRaised else { return false }
        return try await sleep({ try await self.sleep(until: deadline) }, unless: { await stop.raised() })
    }

    /// Sleeps for `duration` unless `stop` is raised first; returns whether it passed (false:
    /// stopped). Throws `CancellationError` if the task is cancelled.
    func sleep(for duration: Duration, unlessRaised stop: RunStop) async throws -> Bool {
        guard !stop.isRaised else { return false }
        return try await sleep({ try await self.sleep(for: duration) }, unless: { await stop.raised() })
    }

    /// Sleeps until `deadline` unless `latch` opens first; returns whether the deadline came.
    func sleep(until deadline: Date, unlessOpened latch: Latch) async throws -> Bool {
        guard !latch.isOpen else { return false }
        return try await sleep({ try await self.sleep(until: deadline) }, unless: { await latch.wait() })
    }

    /// Races `sleeping` against `event` (which returns when it happens, or when cancelled): true
    /// if the sleep ended first. The loser is cancelled.
    private func sleep(
        _ sleeping: @escaping @Sendable () async throws -> Void,
        unless event: @escaping @Sendable () async -> Void
    ) async throws -> Bool {
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await sleeping()
                return true
            }
            group.addTask {
                await event()
                return false
            }
            defer { group.cancelAll() }
            let sleptFirst = try await group.next() ?? false
            // The event's task also returns when cancelled: not an event then.
            try Task.checkCancellation()
            return sleptFirst
        }
    }
}
