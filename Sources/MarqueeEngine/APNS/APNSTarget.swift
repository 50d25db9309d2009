import MarqueeAPNS
import MarqueeCore

/// Where Marquee's APNs clients connect, per environment: Apple's hosts in production, or an
/// emulator (in-process or configured) everywhere else.
public struct APNSTarget: Sendable {
    /// Device pushes and broadcasts.
    public var pushEndpoints: [APNSEnvironment: APNSEndpoint]
    /// Channel management.
    public var channelManagementEndpoints: [APNSEnvironment: APNSEndpoint]
    /// Connection and flow settings of every client.
    public var transport: APNSClientConfiguration.Transport
    public var retryPolicy: APNSRetryPolicy

    public init(
        pushEndpoints: [APNSEnvironment: APNSEndpoint],
        channelManagementEndpoints: [APNSEnvironment: APNSEndpoint],
        transport: APNSClientConfiguration.Transport = .init(),
        retryPolicy: APNSRetryPolicy = APNSRetryPolicy()
    ) {
        self.pushEndpoints = pushEndpoints
        self.channelManagementEndpoints = channelManagementEndpoints
        self.transport = transport
        self.retryPolicy = retryPolicy
    }

    /// Apple's hosts for both environments.
    public static var apple: APNSTarget {
        APNSTarget(
            pushEndpoints: Dictionary(uniqueKeysWithValues: APNSEnvironment.allCases.map { ($0, .push($0)) }),
            channelManagementEndpoints: Dictionary(
                uniqueKeysWithValues: APNSEnvironment.allCases.map { ($0, .channelManagement($0)) }
            )
        )
    }

    func configuration(environment: APNSEnvironment, signingKey: APNSSigningKey) -> APNSClientConfiguration {
        APNSClientConfiguration(
            environment: environment,
            signingKey: signingKey,
            pushEndpoint: pushEndpoints[environment],
            channelManagementEndpoint: channelManagementEndpoints[environment],
            retryPolicy: retryPolicy,
            transport: transport
        )
    }
}
