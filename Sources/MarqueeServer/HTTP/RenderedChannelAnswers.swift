import Foundation
import HTTPTypes
import MarqueeAPI
import MarqueeCore
import MarqueeEngine
import NIOCore
import Synchronization

/// The JSON of channel-ID answers by their entity tag, written once each: a tag names one answer
/// (the channel, its state and policy, its expiry; the event's key and the environment go with the
/// channel), so what is kept never needs forgetting, only bounding.
final class RenderedChannelAnswers: Sendable {
    private let bodies = Mutex<[String: ByteBuffer]>([:])
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    func body(of view: EventChannelView) throws -> ByteBuffer {
        if let body = bodies.withLock({ $0[view.entityTag] }) { return body }
        let body = ByteBuffer(
            bytes: try JSONAnswerStyle.generatedRouteEncoder().encode(Components.Schemas.EventChannel(view))
        )
        guard capacity > 0 else { return body }
        bodies.withLock { bodies in
            if bodies[view.entityTag] == nil, bodies.count >= capacity { bodies.remove(at: bodies.startIndex) }
            bodies[view.entityTag] = body
        }
        return body
    }

    /// The answer to a read of `view`: 304 with its tag when `If-None-Match` names it, otherwise
    /// 200 with its JSON. The same wherever the read is answered (`ChannelReadMiddleware`,
    /// `ChannelReadAnswer`).
    func answer(
        _ view: EventChannelView,
        ifNoneMatch: String?,
        cacheControl: String
    ) throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: ByteBuffer?) {
        var headers = HTTPFields()
        headers[.eTag] = view.entityTag
        headers[.cacheControl] = cacheControl
        if let ifNoneMatch, view.isMatched(byIfNoneMatch: ifNoneMatch) {
            return (.notModified, headers, nil)
        }
        headers[.contentType] = "application/json; charset=utf-8"
        return (.ok, headers, try body(of: view))
    }
}
