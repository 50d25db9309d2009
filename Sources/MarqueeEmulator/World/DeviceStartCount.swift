import Foundation
import MarqueeCore

/// How many starts one device got, for counting a fan-out at the devices afterwards
/// (`GET /v1/{env}/start-counts`): a device with two is a second Live Activity on a Lock Screen,
/// one with none missed the start.
public struct DeviceStartCount: Sendable, Hashable, Codable {
    public var deviceID: String
    public var iOSVersion: IOSVersion
    /// The device's push-to-start token per `attributes-type`.
    public var pushToStartTokens: [String: String]
    /// Start pushes APNs accepted for the device's push-to-start tokens, whatever the device then
    /// did with them (an ignored start counts here and not in ``activities``).
    public var startsAccepted: Int
    /// Live Activities the device has had, ended ones included: each a start it applied.
    public var activities: Int

    public init(
        deviceID: String,
        iOSVersion: IOSVersion,
        pushToStartTokens: [String: String],
        startsAccepted: Int,
        activities: Int
    ) {
        self.deviceID = deviceID
        self.iOSVersion = iOSVersion
        self.pushToStartTokens = pushToStartTokens
        self.startsAccepted = startsAccepted
        self.activities = activities
    }
}
