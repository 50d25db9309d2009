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
}
