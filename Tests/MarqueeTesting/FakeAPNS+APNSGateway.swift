import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine
import NIOCore
import Synchronization

/// The fake's answers to what the engine asks of APNs.
extension FakeAPNS {
    public func send(_ push: APNSDevicePush) async throws(APNSError) -> APNSDeviceResult {
        try await answer(push).get()
    }

    public func send<Pushes: Sequence & Sendable>(
        _ pushes: Pushes,
        window: Int?
    ) -> APNSPushOutcomes where Pushes.Element == APNSDevicePush {
        let (chunks, continuation) = AsyncStream.makeStream(of: [APNSPushOutcome].self)
        let task = Task {
            for (index, push) in pushes.enumerated() where !Task.isCancelled {
                continuation.yield([APNSPushOutcome(index: index, result: await answer(push))])
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return APNSPushOutcomes(chunks: chunks)
    }

    public func send<Pages: AsyncSequence & Sendable>(
        pages: Pages,
        window: Int?
    ) -> APNSPagedPushOutcomes<Pages.Failure> where Pages.Element == [APNSDevicePush] {
        let (chunks, continuation) = AsyncStream.makeStream(of: [APNSPushOutcome].self)
        let ended = SourceFailure<Pages.Failure>()
        let task = Task {
            var index = 0
            do {
                for try await page in pages {
                    // A cancelled batch writes nothing more (what it held was written).
                    for push in page where !Task.isCancelled {
                        continuation.yield([APNSPushOutcome(index: index, result: await answer(push))])
                        index += 1
                    }
                }
            } catch let error as Pages.Failure {
                ended.store(APNSPushSourceError(underlying: error, pushCount: index))
            } catch {
                // A page sequence throws only its `Failure`.
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return APNSPagedPushOutcomes(chunks: chunks, failure: { ended.take() })
    }

    public func broadcast(_ broadcast: APNSBroadcast) async throws(APNSError) -> APNSBroadcastResult {
        let answer = state.withLock { state in
            let answer = state.channelAnswers[broadcast.channelID]?.popFirst() ?? .accepted
            state.broadcasts.append(
                SentBroadcast(
                    channelID: broadcast.channelID,
                    priority: broadcast.priority,
                    expiration: broadcast.expiration,
                    payload: Data(broadcast.payload.readableBytesView),
                    answer: answer
                )
            )
            return answer
        }
        if let error = answer.error { throw error }
        return APNSBroadcastResult(requestID: UUID().uuidString.lowercased())
    }

    public func createChannel(
        bundleID: String,
        storagePolicy: MessageStoragePolicy,
        requestID: UUID
    ) async throws(APNSError) -> APNSChannelCreated {
        try state.withLock { state throws(APNSError) in
            state.createRequestIDs.append(requestID)
            try state.call(.create)
            let channelID = Data((0..<16).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            state.channels[channelID] = storagePolicy
            return APNSChannelCreated(channelID: channelID, requestID: requestID.uuidString.lowercased())
        }
    }

    public func readChannel(
        bundleID: String,
        channelID: String,
        requestID: UUID
    ) async throws(APNSError) -> APNSChannelConfiguration {
        try state.withLock { state throws(APNSError) in
            try state.call(.read)
            guard let policy = state.channels[channelID] else { throw Self.channelNotRegistered }
            return APNSChannelConfiguration(storagePolicy: policy)
        }
    }

    public func listChannels(bundleID: String, requestID: UUID) async throws(APNSError) -> [String] {
        try state.withLock { state throws(APNSError) in
            try state.call(.list)
            return state.channels.keys.sorted()
        }
    }

    @discardableResult
    public func deleteChannel(
        bundleID: String,
        channelID: String,
        requestID: UUID
    ) async throws(APNSError) -> APNSChannelDeletion {
        try state.withLock { state throws(APNSError) in
            try state.call(.delete)
            guard state.channels.removeValue(forKey: channelID) != nil else { return .alreadyGone(Self.notRegistered) }
            return .deleted(requestID: requestID.uuidString.lowercased())
        }
    }

    public func shutdown() async {
        state.withLock { $0.shutdowns += 1 }
    }

    /// APNs' answer to a channel it does not know (as documented: 400 `ChannelNotRegistered`).
    static let notRegistered = APNSRejection(status: 400, reason: .channelNotRegistered)
    static let channelNotRegistered = APNSError.rejected(notRegistered)

    /// Records the push, waits while pushes are held, and answers as scripted.
    private func answer(_ push: APNSDevicePush) async -> Result<APNSDeviceResult, APNSError> {
        await waitWhileHeld()
        let token = push.deviceToken.lowercased()
        let answer = state.withLock { state in
            let answer = state.tokenAnswers[token]?.popFirst() ?? .accepted
            state.pushes.append(
                SentPush(
                    token: token,
                    topic: push.topic,
                    priority: push.priority,
                    collapseID: push.collapseID,
                    kind: push.kind,
                    payload: Data(push.payload.readableBytesView),
                    answer: answer
                )
            )
            return answer
        }
        if let error = answer.error { return .failure(error) }
        return .success(APNSDeviceResult(apnsID: UUID().uuidString.lowercased()))
    }

    private func waitWhileHeld() async {
        await withCheckedContinuation { continuation in
            let held = state.withLock { state in
                let holds = state.holdFrom.map { state.pushes.count + state.held.count >= $0 } ?? false
                if holds { state.held.append(continuation) }
                return holds
            }
            if !held { continuation.resume() }
        }
    }
}

extension FakeAPNS.State {
    /// Counts a channel management call and throws its scripted failure, if any.
    mutating func call(_ operation: FakeAPNS.ChannelOperation) throws(APNSError) {
        channelCalls.append(operation)
        if let error = operationFailures[operation]?.popFirst() { throw error }
    }
}

extension Array {
    /// Removes and returns the first element, `nil` when empty.
    fileprivate mutating func popFirst() -> Element? {
        isEmpty ? nil : removeFirst()
    }
}

/// A page source's failure, carried from the fake's sending task to the outcome sequence's end.
final class SourceFailure<Failure: Error>: Sendable {
    private let slot = Mutex<APNSPushSourceError<Failure>?>(nil)

    func store(_ error: APNSPushSourceError<Failure>) {
        slot.withLock { $0 = error }
    }

    func take() -> APNSPushSourceError<Failure>? {
        slot.withLock { slot in
            defer { slot = nil }
            return slot
        }
    }
}
