import Foundation
import MarqueeCore

extension StartService {
    /// How many devices a start of `audience` in `environment` would send to now: the valid
    /// push-to-start tokens of the event's attributes type it selects, less those already started
    /// for the event (as the start's job counts its `total`). Sends nothing.
    public func audienceSize(
        app: App,
        eventKey: String,
        environment: APNSEnvironment,
        audience: StartAudience
    ) async throws -> (attributesType: String, count: Int64) {
        if let error = EventKeyRule.check(eventKey) { throw EngineError.invalidInput([error]) }
        guard let event = try await store.event(appID: app.id, externalKey: eventKey) else {
            throw EngineError.notFound(resource: "event", id: eventKey)
        }
        let errors = Self.audienceErrors(audience)
        guard errors.isEmpty else { throw EngineError.invalidInput(errors) }
        let query = AudienceQuery(
            appID: app.id,
            environment: environment,
            attributesType: event.attributesType,
            excludingStartsOf: event.id,
            anyTags: audience.tags,
            userIDs: audience.userIDs,
            tokens: audience.tokens
        )
        return (event.attributesType, try await store.audienceExtent(query).count)
    }
}
