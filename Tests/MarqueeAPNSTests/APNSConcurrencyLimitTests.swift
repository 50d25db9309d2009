import NIOCore
import Testing

@testable import MarqueeAPNS

/// The concurrency limit against a simulated path: a sender that keeps the limit in flight (or
/// fewer, when it has less to send), a server that answers `rate` requests a second in order, and
/// `base` latency on top of each answer with a fixed pattern of jitter (from 0.6 to 1.4 times
/// `base`, as the emulator's 5–25 ms are). More in flight than rate × base only queues at the
/// server: latency then grows with the queue (Little's law). Time is simulated, never read.
@Suite("Adaptive concurrency: how many requests one connection keeps in flight")
struct APNSConcurrencyLimitTests {
    struct Path {
        /// Requests a second the server answers.
        var rate: Double
        /// Seconds every answer takes on top of its wait at the server.
        var base: Double
        /// The most the sender has in flight at once, whatever the limit (nil: always the limit).
        var demand: Int?
        private var serverFreeAt = 0.0
        private var jitterIndex = 0
        private static let jitter = [1.0, 0.6, 1.3, 0.8, 1.4, 0.9, 1.1, 0.7, 1.2, 1.0]

        init(rate: Double, base: Double, demand: Int? = nil) {
            self.rate = rate
            self.base = base
            self.demand = demand
        }

        /// When a request sent at `now` is answered.
        mutating func answer(sentAt now: Double) -> Double {
            serverFreeAt = max(now, serverFreeAt) + 1 / rate
            jitterIndex += 1
            return serverFreeAt + base * Self.jitter[jitterIndex % Self.jitter.count]
        }
    }

    /// Runs `limiter` on `path` from `start` for `seconds` of simulated time; returns the time it
    /// stopped and the limit each answer left behind.
    struct Simulation {
        var limiter: APNSConcurrencyLimit
        var budget: Int
        var now = 0.0
        private var inFlight: [(sentAt: Double, answerAt: Double, inFlightAtSend: Int)] = []
        /// The limit after each answer, with the time of the answer.
        private(set) var limits: [(at: Double, limit: Int)] = []
        /// The most requests in flight at any moment.
        private(set) var peakInFlight = 0

        init(floor: Int = 20, budget: Int = 1_000, tweak: (inout APNSConcurrencyLimit.Settings) -> Void = { _ in }) {
            var settings = APNSConcurrencyLimit.Settings(floor: floor)
            tweak(&settings)
            limiter = APNSConcurrencyLimit(settings: settings)
            self.budget = budget
        }

        static func deadline(_ seconds: Double) -> NIODeadline {
            // Far from zero, as uptime is.
            .uptimeNanoseconds(UInt64((1_000 + seconds) * 1e9))
        }

        mutating func run(on path: inout Path, seconds: Double) {
            let end = now + seconds
            while now < end {
                let allowed = min(limiter.limit, budget, path.demand ?? .max)
                while inFlight.count < allowed {
                    inFlight.append((now, path.answer(sentAt: now), inFlight.count + 1))
                }
                peakInFlight = max(peakInFlight, inFlight.count)
                let next = inFlight.indices.min { inFlight[$0].answerAt < inFlight[$1].answerAt }!
                let answered = inFlight.remove(at: next)
                now = answered.answerAt
                limiter.record(
                    sentAt: Self.deadline(answered.sentAt),
                    answeredAt: Self.deadline(now),
                    inFlightAtSend: answered.inFlightAtSend,
                    budget: budget
                )
                limits.append((now, limiter.limit))
            }
        }

        /// The median limit over the last `seconds` simulated.
        func settledLimit(overLast seconds: Double) -> Int {
            let recent = limits.filter { $0.at >= now - seconds }.map(\.limit).sorted()
            return recent[recent.count / 2]
        }
    }

    @Test("it settles near rate × latency plus headroom, far below the stream budget")
    func convergesNearTheBandwidthDelayProduct() {
        // 4,000 answers a second at 10 ms: 40 in flight carry the rate; the budget is 1,000.
        var path = Path(rate: 4_000, base: 0.010)
        var simulation = Simulation()
        simulation.run(on: &path, seconds: 3)
        let settled = simulation.settledLimit(overLast: 1)
        #expect((40...120).contains(settled), "settled at \(settled)")
        #expect(simulation.peakInFlight < 250)
    }

    @Test("when the path slows down (answers queue), the limit follows it down; when it speeds up again, back up")
    func reactsToAQueueingStep() {
        var path = Path(rate: 4_000, base: 0.010)
        var simulation = Simulation(floor: 5)
        simulation.run(on: &path, seconds: 3)
        let before = simulation.settledLimit(overLast: 1)
        // The server now answers a quarter as many a second: the same limit would queue 4 times as long.
        path.rate = 1_000
        simulation.run(on: &path, seconds: 2)
        let slower = simulation.settledLimit(overLast: 1)
        #expect(slower * 2 < before, "from \(before) to \(slower)")
        #expect((10...30).contains(slower), "settled at \(slower) for 10 in flight needed")
        path.rate = 4_000
        simulation.run(on: &path, seconds: 2)
        let again = simulation.settledLimit(overLast: 1)
        #expect((40...120).contains(again), "settled at \(again)")
    }

    @Test("never below the floor, however slow the path, and never above the stream budget, however fast")
    func boundedByFloorAndBudget() {
        // Settled at 10 ms and 4,000 a second; then the server answers 200 a second, which 2 in
        // flight would carry: the floor holds.
        var slowing = Path(rate: 4_000, base: 0.010)
        var floored = Simulation(floor: 20)
        floored.run(on: &slowing, seconds: 2)
        slowing.rate = 200
        floored.run(on: &slowing, seconds: 3)
        #expect(floored.limits.allSatisfy { $0.limit >= 20 })
        #expect(floored.settledLimit(overLast: 1) == 20)

        // A server that never queues: nothing says stop, so the budget does.
        var fast = Path(rate: 10_000_000, base: 0.010)
        var capped = Simulation(floor: 20, budget: 300)
        capped.run(on: &fast, seconds: 1)
        #expect(capped.limits.allSatisfy { $0.limit <= 300 })
        #expect(capped.settledLimit(overLast: 0.5) == 300)

        // A budget below the floor (a server that allows few streams) wins over the floor.
        var alsoFast = Path(rate: 10_000_000, base: 0.010)
        var tight = Simulation(floor: 20, budget: 8)
        tight.run(on: &alsoFast, seconds: 0.5)
        #expect(tight.limits.suffix(10).allSatisfy { $0.limit == 8 })
    }

    @Test("it grows only while the limit is used: a sender with little to send keeps it where it is")
    func growsOnlyWhenUsed() {
        var path = Path(rate: 10_000_000, base: 0.010, demand: 5)
        var simulation = Simulation(floor: 20)
        simulation.run(on: &path, seconds: 2)
        #expect(simulation.limits.allSatisfy { $0.limit == 20 })
    }

    @Test("after the path's own latency rises for good, the old minimum ages out and the limit recovers")
    func recoversAfterTheMinimumShifts() {
        var path = Path(rate: 4_000, base: 0.010)
        var simulation = Simulation(floor: 5) { $0.baselineWindow = .seconds(1) }
        simulation.run(on: &path, seconds: 2)
        // APNs itself now answers in 40 ms, at the same rate: 160 in flight carry it.
        path.base = 0.040
        simulation.run(on: &path, seconds: 0.3)
        let shrunk = simulation.limits.last!.limit
        #expect(shrunk < 40, "a latency rise first reads as a queue: \(shrunk)")
        simulation.run(on: &path, seconds: 4)
        let recovered = simulation.settledLimit(overLast: 1)
        #expect((160...480).contains(recovered), "recovered to \(recovered)")
    }

    @Test("a rare slow answer moves nothing: rounds are judged by their median")
    func ignoresRareSpikes() {
        var simulation = Simulation(floor: 20, budget: 200)
        var fast = Path(rate: 10_000_000, base: 0.010)
        simulation.run(on: &fast, seconds: 0.5)
        #expect(simulation.limiter.limit == 200)
        // One answer in 50 takes 50 times as long.
        var now = simulation.now
        for index in 0..<2_000 {
            let latency = index % 50 == 0 ? 0.5 : 0.010
            simulation.limiter.record(
                sentAt: Simulation.deadline(now),
                answeredAt: Simulation.deadline(now + latency),
                inFlightAtSend: 200,
                budget: 200
            )
            now += 0.001
        }
        #expect(simulation.limiter.limit == 200)
    }
}
