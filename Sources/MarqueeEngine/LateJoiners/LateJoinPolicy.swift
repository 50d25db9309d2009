import Foundation
import MarqueeCore

/// Whom a start's late joiners are, and when an event takes them: the decisions behind the
/// late-join queue (the store's registration hook applies the same rules in SQL).
enum LateJoinPolicy {
    /// What a start does to its event's late-join offer in its environment.
    enum Decision: Sendable, Hashable {
        /// Leaves the offer as it is: a start to user IDs or tokens reaches people by name, and
        /// says nothing about those who come later (a kick-off to everyone still holds).
        case unchanged
        /// Late joining off for the event in this environment (until a start turns it on again).
        case off
        /// Late joiners are the whole environment (`tags` empty) or the tokens carrying any of `tags`.
        case on(tags: [String])
    }

    /// The start's decision. A start to user IDs or tokens cannot turn late joining on: its
    /// audience is a list, and a token registered later is on no list (`check` refuses it).
    static func decision(for request: StartRequest) -> Decision {
        if request.lateJoiners.enabled == false { return .off }
        let audience = request.audience
        guard audience.userIDs.isEmpty && audience.tokens.isEmpty else { return .unchanged }
        return .on(tags: audience.tags)
    }

    /// What is wrong with the request's late-join choice.
    static func errors(in request: StartRequest, pointerPrefix: String = "") -> [FieldError] {
        var errors: [FieldError] = []
        let audience = request.audience
        if request.lateJoiners.enabled == true && !(audience.userIDs.isEmpty && audience.tokens.isEmpty) {
            errors.append(
                FieldError(
                    "\(pointerPrefix)/lateJoiners/enabled",
                    """
                    late joining reaches the whole environment or tags: an audience of user IDs or tokens cannot \
                    have late joiners
                    """
                )
            )
        }
        return errors
    }

    /// Whether an event takes late joiners now: late joining on, started (`live`, or `scheduled`
    /// with a start in its ledger), neither ended nor cancelled.
    static func takesLateJoiners(_ event: Event, hasStarted: Bool) -> Bool {
        guard event.lateJoiners else { return false }
        switch event.state {
        case .live: return true
        case .scheduled: return hasStarted
        case .ended, .cancelled: return false
        }
    }

    /// The offer a start records, or `nil` when it leaves the existing one.
    static func offer(
        for request: StartRequest,
        event: Event,
        jobID: JobID,
        at: Date
    ) -> LateJoinOffer? {
        let decision = decision(for: request)
        if decision == .unchanged { return nil }
        var tags: [String] = []
        if case .on(let onTags) = decision { tags = onTags }
        return LateJoinOffer(
            appID: event.appID,
            eventID: event.id,
            environment: request.environment,
            attributesType: event.attributesType,
            enabled: decision != .off,
            everyone: decision == .on(tags: []),
            tags: tags,
            attributes: request.attributes,
            contentState: request.contentState,
            alert: request.lateJoiners.alert,
            inputPushToken: request.inputPushToken,
            jobID: jobID,
            updatedAt: at
        )
    }
}
