import Testing

@testable import MarqueeServer

/// The deadline of one connection as its requests come and go, on a clock the test moves.
@Suite("Connection deadlines")
struct ConnectionDeadlinesTests {
    let limits = ConnectionLimits(
        idleTimeout: .seconds(60),
        headerTimeout: .seconds(10),
        bodyTimeout: .seconds(30),
        maximumConnections: 10
    )
    let zero = ContinuousClock.now

    func at(_ seconds: Int) -> ContinuousClock.Instant { zero.advanced(by: .seconds(seconds)) }

    @Test("an idle connection expires after the idle timeout, and not before")
    func idle() {
        let deadlines = ConnectionDeadlines(limits: limits, now: at(0))
        #expect(deadlines.expiry(now: at(59)) == nil)
        #expect(deadlines.expiry(now: at(60)) == .idle)
    }

    @Test(
        """
        the first byte of a request gives its headers the header timeout, and its headers give its body the body \
        timeout
        """
    )
    func headersThenBody() {
        var deadlines = ConnectionDeadlines(limits: limits, now: at(0))
        deadlines.bytesRead(now: at(5))
        #expect(deadlines.expiry(now: at(15)) == .headers)
        // Bytes of the same headers do not move the deadline: a slow sender gets no more time.
        deadlines.bytesRead(now: at(14))
        #expect(deadlines.expiry(now: at(15)) == .headers)
        deadlines.headRead(now: at(14))
        #expect(deadlines.expiry(now: at(43)) == nil)
        deadlines.bytesRead(now: at(40))
        #expect(deadlines.expiry(now: at(44)) == .body)
    }

    @Test(
        """
        while answering there is no deadline (an event stream runs for hours); after the answer the idle timeout \
        starts again
        """
    )
    func answering() {
        var deadlines = ConnectionDeadlines(limits: limits, now: at(0))
        deadlines.bytesRead(now: at(1))
        deadlines.headRead(now: at(1))
        deadlines.endRead(now: at(1))
        #expect(deadlines.phase == .answering)
        #expect(deadlines.expiry(now: at(100_000)) == nil)
        deadlines.answerEnded(now: at(100_000))
        #expect(deadlines.expiry(now: at(100_059)) == nil)
        #expect(deadlines.expiry(now: at(100_060)) == .idle)
    }

    @Test("an answer sent before the body was read leaves the body its time; once read, the connection is idle")
    func answeredEarly() {
        var deadlines = ConnectionDeadlines(limits: limits, now: at(0))
        deadlines.bytesRead(now: at(0))
        deadlines.headRead(now: at(0))
        deadlines.answerEnded(now: at(1))
        #expect(deadlines.expiry(now: at(30)) == .body)
        deadlines.endRead(now: at(2))
        #expect(deadlines.phase == .idle)
        #expect(deadlines.expiry(now: at(61)) == nil)
        #expect(deadlines.expiry(now: at(62)) == .idle)
    }
}
