import MarqueeCore

/// A fault the emulator injects into requests it would otherwise answer normally, scriptable per
/// endpoint and environment. Faults apply after routing and before authentication, so they hit
/// requests exactly as a failing APNs front end would.
public struct APNSEmulatorFault: Sendable, Hashable {
    /// Which requests a fault applies to.
    public enum Endpoint: String, Sendable, Hashable, Codable, CaseIterable {
        case devicePush
        case broadcast
        case channelManagement
    }

    public enum Action: Sendable, Hashable {
        /// Answer with this reason and its status: `TooManyRequests` (429), `InternalServerError`
        /// (500), `ServiceUnavailable` or `Shutdown` (503), or any other reason.
        case respond(APNSErrorReason)
        /// Send GOAWAY (with a JSON `reason` and the last processed stream ID) once a connection
        /// has received this many streams; the connection closes after answering them.
        case goAway(afterStreams: Int, reason: APNSErrorReason)
        /// Close the TCP connection abruptly (RST) instead of answering.
        case resetConnection
        /// Process the request as usual (a start reaches its device), then close the TCP connection
        /// abruptly instead of answering: what a client sees when APNs handled a request and the
        /// connection died before the answer, the case it can tell apart from nothing.
        case resetConnectionAfterProcessing
        /// Answer after this added latency (plus a random jitter up to `jitter`).
        case delay(Duration, jitter: Duration)
    }

    /// Which of the matching requests get the fault. Ignored by `goAway`, which counts streams.
    public enum Rate: Sendable, Hashable {
        case always
        /// Every n-th matching request (the n-th, 2n-th, ...).
        case everyNth(Int)
        /// Each matching request independently with this probability (0...1).
        case probability(Double)
        /// Only the first n matching requests.
        case first(Int)
        /// Every matching request after the first n: a test lets exactly n through, then holds
        /// the rest back (with `respond(.tooManyRequests)`, say) until it removes the fault.
        case afterFirst(Int)
    }

    public var action: Action
    public var rate: Rate
    /// Endpoints the fault applies to; all when empty.
    public var endpoints: Set<Endpoint>
    /// Environments the fault applies to; all when empty.
    public var environments: Set<APNSEnvironment>

    public init(
        _ action: Action,
        rate: Rate = .always,
        endpoints: Set<Endpoint> = [],
        environments: Set<APNSEnvironment> = []
    ) {
        self.action = action
        self.rate = rate
        self.endpoints = endpoints
        self.environments = environments
    }

    func applies(to endpoint: Endpoint, in environment: APNSEnvironment) -> Bool {
        (endpoints.isEmpty || endpoints.contains(endpoint))
            && (environments.isEmpty || environments.contains(environment))
    }
}

/// The installed faults and how many requests each has matched.
struct FaultPlan: Sendable {
    private var entries: [(fault: APNSEmulatorFault, matched: Int)] = []

    var isEmpty: Bool { entries.isEmpty }
    var faults: [APNSEmulatorFault] { entries.map(\.fault) }

    mutating func install(_ fault: APNSEmulatorFault) {
        entries.append((fault, 0))
    }

    mutating func removeAll() {
        entries.removeAll()
    }

    /// The GOAWAY threshold for new connections to `environment`, if a fault sets one.
    func goAway(for environment: APNSEnvironment) -> (afterStreams: Int, reason: APNSErrorReason)? {
        for entry in entries {
            guard case .goAway(let streams, let reason) = entry.fault.action,
                entry.fault.environments.isEmpty || entry.fault.environments.contains(environment)
            else { continue }
            return (streams, reason)
        }
        return nil
    }

    /// The per-request faults that fire for this request, in installation order.
    mutating func select(
        for endpoint: APNSEmulatorFault.Endpoint,
        in environment: APNSEnvironment
    ) -> [APNSEmulatorFault.Action] {
        var fired: [APNSEmulatorFault.Action] = []
        for index in entries.indices {
            let fault = entries[index].fault
            if case .goAway = fault.action { continue }
            guard fault.applies(to: endpoint, in: environment) else { continue }
            entries[index].matched += 1
            let matched = entries[index].matched
            let fires: Bool
            switch fault.rate {
            case .always: fires = true
            case .everyNth(let n): fires = n > 0 && matched % n == 0
            case .probability(let p): fires = Double.random(in: 0..<1) < p
            case .first(let n): fires = matched <= n
            case .afterFirst(let n): fires = matched > n
            }
            if fires { fired.append(fault.action) }
        }
        return fired
    }
}

extension APNSEmulatorFault: CustomStringConvertible {
    /// What the fault does, to which requests, in words (the inspection API and logs show this).
    public var description: String {
        let what: String
        switch action {
        case .respond(let reason): what = "answer \(reason.reasonString) (\(reason.status ?? 400))"
        case .goAway(let streams, let reason):
            what = "GOAWAY \(reason.reasonString) after \(streams) streams per connection"
        case .resetConnection: what = "reset the connection"
        case .resetConnectionAfterProcessing: what = "process the request, then reset the connection unanswered"
        case .delay(let fixed, let jitter):
            what = "delay answers by \(fixed)" + (jitter > .zero ? " + up to \(jitter)" : "")
        }
        let environmentNames =
            environments.isEmpty ? "both environments" : environments.map(\.rawValue).sorted().joined(separator: ", ")
        if case .goAway = action { return "\(what) in \(environmentNames)" }
        let which: String
        switch rate {
        case .always: which = "every request"
        case .everyNth(let n): which = "one request in \(n)"
        case .probability(let p): which = "\(p * 100)% of requests"
        case .first(let n): which = "the first \(n) requests"
        case .afterFirst(let n): which = "every request after the first \(n)"
        }
        let endpointNames =
            endpoints.isEmpty ? "every endpoint" : endpoints.map(\.rawValue).sorted().joined(separator: ", ")
        return "\(what) to \(which) of \(endpointNames) in \(environmentNames)"
    }
}
