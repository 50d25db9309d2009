import Testing

@testable import MarqueeServer

/// Which threads run the process's Swift tasks, as `main` reads it from the environment.
@Suite("Concurrency executor setting")
struct ConcurrencyExecutorTests {
    @Test("without the variable, the event loops")
    func defaultsToEventLoops() throws {
        #expect(try ConcurrencyExecutor.chosen(in: [:]) == .eventLoops)
        #expect(try ConcurrencyExecutor.chosen(in: ["MARQUEE_HTTP_PORT": "9000"]) == .eventLoops)
    }

    @Test("MARQUEE_RUNTIME_CONCURRENCY_EXECUTOR names either executor")
    func namesEither() throws {
        let variable = "MARQUEE_RUNTIME_CONCURRENCY_EXECUTOR"
        #expect(try ConcurrencyExecutor.chosen(in: [variable: "event-loops"]) == .eventLoops)
        #expect(try ConcurrencyExecutor.chosen(in: [variable: "swift-pool"]) == .swiftPool)
    }

    @Test("another value is refused with the key and the choices")
    func refusesAnotherValue() throws {
        let error = #expect(throws: ConfigurationError.self) {
            try ConcurrencyExecutor.chosen(in: ["MARQUEE_RUNTIME_CONCURRENCY_EXECUTOR": "dispatch"])
        }
        #expect(error?.key == "runtime.concurrencyExecutor")
        #expect(error?.description.contains("event-loops or swift-pool") == true)
    }

    @Test("Swift's own pool is always in place: installing it changes nothing and says so")
    func swiftPoolIsAlwaysInstalled() {
        #expect(ConcurrencyExecutor.swiftPool.install())
    }
}
