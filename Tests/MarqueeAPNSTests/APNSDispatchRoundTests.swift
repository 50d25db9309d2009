import Testing

@testable import MarqueeAPNS

@Suite("Choosing connections in one dispatch pass")
struct APNSDispatchRoundTests {
    final class Connection: APNSDispatchCandidate {
        let name: String
        var availableStreams: Int
        init(_ name: String, availableStreams: Int) {
            self.name = name
            self.availableStreams = availableStreams
        }
    }

    @Test("the connection with the most free streams is chosen; full ones never")
    func mostFreeStreams() {
        let round = APNSDispatchRound()
        let full = Connection("full", availableStreams: 0)
        let some = Connection("some", availableStreams: 10)
        let most = Connection("most", availableStreams: 90)
        #expect(round.choose(from: [full, some, most])?.name == "most")
        #expect(round.choose(from: [full]) == nil)
    }

    @Test("a connection that declines is not chosen again in the pass even while it reports free streams")
    func declinedConnectionIsSkipped() {
        // The pool's loop, with connections that refuse to write but never stop offering streams:
        // the shape that spun forever when a refusal did not also drain the connection.
        let stubborn = Connection("stubborn", availableStreams: 100)
        let other = Connection("other", availableStreams: 10)
        var round = APNSDispatchRound()
        var chosen: [String] = []
        while let connection = round.choose(from: [stubborn, other]) {
            chosen.append(connection.name)
            round.decline(connection)
            if chosen.count > 10 { break }
        }
        #expect(chosen == ["stubborn", "other"])
    }

    @Test(
        "a busy connection is written once a batch of its streams is free; an idle one at once",
        arguments: [
            // (free, in flight, limit, minimum batch) → streams written now
            (1, 0, 20, 8, 1),  // idle: a broadcast or an update goes at once
            (13, 7, 20, 8, 13),  // fewer than a batch in flight: at once
            (3, 17, 20, 8, 0),  // busy, three free: its answers free more
            (8, 12, 20, 8, 8),  // busy, a batch free: all of it
            (12, 8, 20, 8, 12),
            (2, 8, 10, 8, 0),  // a limit of 10: the batch is 5, half the limit
            (5, 5, 10, 8, 5),
            (1, 1, 1, 8, 1),  // one stream until APNs accepts the token: no batch
            (1, 999, 1000, 1, 1),  // a minimum batch of 1: every free stream at once
        ] as [(Int, Int, Int, Int, Int)]
    )
    func writableStreams(available: Int, inFlight: Int, limit: Int, minimumBatch: Int, written: Int) {
        #expect(
            APNSDispatchRound.writableStreams(
                available: available,
                inFlight: inFlight,
                limit: limit,
                minimumBatch: minimumBatch
            ) == written
        )
    }
}
