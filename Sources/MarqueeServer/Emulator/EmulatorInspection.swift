import MarqueeCore
import MarqueeEmulator

/// What the API's `/v1/emulator` operations read and do at an APNs emulator: the in-process one
/// (``APNSEmulator`` itself), or another reached over its inspection API
/// (``RemoteEmulatorInspection``, `emulator.inspectionURL`).
protocol EmulatorInspection: Sendable {
    func devices(in environment: APNSEnvironment) async throws -> [EmulatedDevice]
    func activities(in environment: APNSEnvironment) async throws -> [EmulatedActivity]
    func registerDevice(
        environment: APNSEnvironment,
        bundleID: String,
        iOSVersion: IOSVersion,
        pushToStartAttributesTypes: [String]
    ) async throws -> EmulatedDevice
}

extension APNSEmulator: EmulatorInspection {}
