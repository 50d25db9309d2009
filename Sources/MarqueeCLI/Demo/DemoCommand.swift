import ArgumentParser
import Foundation
import Logging
import MarqueeServer
import UnixSignals

/// `marquee demo`: a match told in one command, on the embedded defaults.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Tells a football match to 1,000 virtual iPhones in one command, and shows what they display.",
        discussion: """
            Starts the service and the APNs emulator in this process (SQLite in a temporary folder, \
            a free port of 127.0.0.1; ./data, your servers and MARQUEE_* settings are left alone), \
            then over the REST API: creates an app and an event with its broadcast channel, \
            registers virtual devices on iOS 17.2, 17.4 and 18 and their push-to-start tokens, \
            starts the Live Activity, broadcasts the match (goals, cards, half time, full time; \
            iOS 18 through the channel, iOS 17 through the update tokens their apps report), ends \
            it and closes the event, deleting the channel. Prints each step with its time as it \
            completes, a few Lock Screens as the devices draw them, and every device's final \
            state. Exits 0 when every device ended showing the final score, 7 when some do not. \
            With --console the service stays up after the match, its web console's device wall \
            showing every device's Lock Screen, until Ctrl-C.
            """
    )

    @Option(help: "How many virtual devices to tell the match to (their iOS versions in turn).")
    var devices = 1000

    @Flag(help: "Print one JSON object at the end instead of the tables and Lock Screens.")
    var json = false

    @Flag(
        help:
            """
            Keep the service up after the match and print its web console's URL and a key to sign in with, until \
            Ctrl-C.
            """
    )
    var console = false

    @Flag(help: "Show the service's own log (info and up) on standard error; by default only warnings.")
    var verbose = false

    func validate() throws {
        guard (1...100_000).contains(devices) else { throw ValidationError("--devices must be from 1 to 100,000") }
    }

    func run() async throws {
        let context = CLIContext.current
        let script = MatchScript.arsenalChelsea
        let demo = MatchDemo(script: script, deviceCount: devices)
        let level: Logger.Level = verbose ? .info : .warning
        let logger = Logger(label: "marquee.demo") { label in LogFormat.text.makeHandler(label: label, level: level) }
        let report = DemoReport(script: script, deviceCount: devices)
        if !json { context.print(report.heading + "\n\n" + DemoReport.stepHeader) }

        let clock = ContinuousClock()
        let begun = clock.now
        let signals: [UnixSignal] = context.ownsSignals ? [.sigint, .sigterm] : []
        let outcome: MatchDemo.Outcome
        do {
            outcome = try await DemoService.run(logger: logger, cancellationSignals: signals) {
                [json, console] started in
                let outcome = try await demo.run(on: started, startup: clock.now - begun) { step in
                    if !json { context.print(DemoReport.line(step)) }
                }
                if console {
                    context.print(json ? "" : report.text(outcome, total: clock.now - begun))
                    context.print(
                        DemoReport.consoleInvitation(baseURL: started.baseURL, publisherKey: outcome.publisherKey)
                    )
                    // Until Ctrl-C, which DemoService reports as an interruption.
                    while !Task.isCancelled { try await Task.sleep(for: .seconds(3600)) }
                }
                return outcome
            }
        } catch let failure as CLIFailure where console && failure.code == .interrupted {
            context.print("Stopped: the demo's service is shut down and its folder removed.")
            return
        }
        let total = clock.now - begun

        if json {
            context.printJSON(report.json(outcome, total: total))
        } else {
            context.print(report.text(outcome, total: total))
        }
        guard outcome.census.everyDeviceShowsExpected else {
            throw CLIFailure(
                .partial,
                """
                \(Formatting.count(outcome.census.mismatches.count)) of \(Formatting.count(outcome.census.total)) \
                devices do not show the final state
                """
            )
        }
    }
}
