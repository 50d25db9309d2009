import Foundation
import MarqueeCore
import Testing

@testable import MarqueeEngine

/// What the channel-ID read keeps, and when it forgets, without a store.
@Suite("Channel answer cache")
struct ChannelAnswerCacheTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func answer(appID: AppID = AppID(), key: String = "derby") -> (ChannelAnswerCache.Key, EventChannelView) {
        let event = Event(
            appID: appID,
            externalKey: key,
            title: "Derby",
            attributesType: "MatchAttributes",
            environments: [.sandbox],
            storagePolicy: .mostRecentMessageStored,
            plannedStart: now,
            plannedEnd: now.addingTimeInterval(7200),
            createdAt: now
        )
        let channel = BroadcastChannel(
            appID: appID,
            eventID: event.id,
            environment: .sandbox,
            apnsChannelID: "Y2hhbm5lbA==",
            storagePolicy: .mostRecentMessageStored,
            state: .active,
            createdAt: now,
            updatedAt: now
        )
        let view = EventChannelView(event: event, channel: channel, expiresAt: nil)
        return (ChannelAnswerCache.Key(appID: appID, eventKey: key, environment: .sandbox), view)
    }

    @Test("an answer is kept until its event changes; another event's change leaves it")
    func forgetsByEvent() {
        let cache = ChannelAnswerCache(capacity: 10)
        let (key, view) = answer()
        let (otherKey, other) = answer(key: "final")
        cache.remember(view, for: key, readAt: cache.generation)
        cache.remember(other, for: otherKey, readAt: cache.generation)
        #expect(cache.answer(for: key) == view)

        cache.forget(eventID: other.event.id)
        #expect(cache.answer(for: key) == view)
        #expect(cache.answer(for: otherKey) == nil)
        cache.forget(eventID: nil)
        #expect(cache.count == 0)
    }

    @Test("a read that began before a change is not kept: it may have seen the channel before it changed")
    func raceWithForgetting() {
        let cache = ChannelAnswerCache(capacity: 10)
        let (key, view) = answer()
        let read = cache.generation
        cache.forget(eventID: view.event.id)  // the channel was replaced while the read ran
        cache.remember(view, for: key, readAt: read)
        #expect(cache.answer(for: key) == nil)
        cache.remember(view, for: key, readAt: cache.generation)
        #expect(cache.answer(for: key) == view)
    }

    @Test("suspended, the cache forgets everything and keeps nothing until it hears of changes again")
    func suspension() {
        let cache = ChannelAnswerCache(capacity: 10)
        let (key, view) = answer()
        cache.remember(view, for: key, readAt: cache.generation)
        cache.suspend()
        #expect(cache.count == 0)
        cache.remember(view, for: key, readAt: cache.generation)
        #expect(cache.answer(for: key) == nil)
        cache.resume()
        cache.remember(view, for: key, readAt: cache.generation)
        #expect(cache.answer(for: key) == view)
    }

    @Test("it keeps at most its capacity; a capacity of zero keeps nothing")
    func capacity() {
        let cache = ChannelAnswerCache(capacity: 2)
        for name in ["a", "b", "c"] {
            let (key, view) = answer(key: name)
            cache.remember(view, for: key, readAt: cache.generation)
            #expect(cache.answer(for: key) == view)
        }
        #expect(cache.count == 2)

        let off = ChannelAnswerCache(capacity: 0)
        let (key, view) = answer()
        off.remember(view, for: key, readAt: off.generation)
        #expect(off.answer(for: key) == nil)
    }

    @Test("If-None-Match names the answer by its tag, in a list or as *")
    func ifNoneMatch() {
        let (_, view) = answer()
        #expect(view.isMatched(byIfNoneMatch: view.entityTag))
        #expect(view.isMatched(byIfNoneMatch: "\"other\", \(view.entityTag)"))
        #expect(view.isMatched(byIfNoneMatch: " * "))
        #expect(!view.isMatched(byIfNoneMatch: "\"other\""))
    }
}
