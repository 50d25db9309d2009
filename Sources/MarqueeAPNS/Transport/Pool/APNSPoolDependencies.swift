import Logging
import MarqueeCore

/// What every pool of one client shares: one signing key's provider tokens, one retry policy,
/// one clock, one set of metrics and one logger. The client's push pools and its channel
/// management pool differ only in their loop, endpoint and transport settings.
struct APNSPoolDependencies: Sendable {
    let retryPolicy: APNSRetryPolicy
    let tokenCache: APNSProviderTokenCache
    let clock: any WallClock
    let metrics: APNSClientMetrics
    let logger: Logger
}
