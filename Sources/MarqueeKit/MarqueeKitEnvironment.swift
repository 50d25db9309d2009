/// The APNs environment the app's tokens belong to: the app's `aps-environment` entitlement
/// (`development` builds are `sandbox`, App Store and TestFlight builds `production`).
public enum MarqueeKitEnvironment: String, Sendable, Codable, CaseIterable {
    case sandbox
    case production
}
