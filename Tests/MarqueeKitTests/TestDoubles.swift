import Foundation
import MarqueeKit

/// A transport that answers from a script and keeps every request: for the client's logic only
/// (the URLSession transport is tested against a real server).
actor ScriptedTransport: MarqueeTransport {
    private(set) var requests: [MarqueeHTTPRequest] = []
    private var answer: @Sendable (MarqueeHTTPRequest, Int) -> MarqueeHTTPResponse

    /// - Parameter answer: the answer to a request, given the number of requests before it.
    init(
        answer: @escaping @Sendable (MarqueeHTTPRequest, Int) -> MarqueeHTTPResponse = { _, _ in
            MarqueeHTTPResponse(status: 200)
        }
    ) {
        self.answer = answer
    }

    func send(_ request: MarqueeHTTPRequest) async throws -> MarqueeHTTPResponse {
        requests.append(request)
        return answer(request, requests.count - 1)
    }

    var paths: [String] { requests.map(\.path) }

    /// The requests' JSON bodies, read outside the actor (JSON objects are not `Sendable`).
    nonisolated func bodies() async -> [[String: Any]] {
        await requests.map { (try? JSONSerialization.jsonObject(with: $0.body ?? Data())) as? [String: Any] ?? [:] }
    }
}

/// A device's activities as ActivityKit would list them: ending one with immediate dismissal
/// takes it off the list.
actor ModelActivityHost: ActivityHost {
    private(set) var activities: [ObservedActivity]
    private(set) var ended: [String] = []

    init(_ activities: [ObservedActivity] = []) {
        self.activities = activities
    }

    func set(_ activities: [ObservedActivity]) {
        self.activities = activities
    }

    func currentActivities() async -> [ObservedActivity] { activities }

    func end(activityIDs: [String]) async {
        ended += activityIDs
        activities.removeAll { activityIDs.contains($0.id) }
    }
}

/// The waits the client asked for, instead of waiting.
final class RecordedWaits: Sendable {
    private let waits = LockedValue<[Duration]>([])
    var all: [Duration] { waits.value }
    func record(_ duration: Duration) { waits.mutate { $0.append(duration) } }
}

/// A value behind a lock, for the test doubles' closures.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}

extension Data {
    /// Bytes from hex, for tokens written as the API shows them.
    init(hex: String) {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        self.init(bytes)
    }
}
