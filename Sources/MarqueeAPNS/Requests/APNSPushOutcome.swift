import Foundation

/// What became of one push of a batch.
public struct APNSPushOutcome: Sendable {
    /// The push's position in the sequence the batch was given.
    public var index: Int
    public var push: APNSDevicePush
    public var result: Result<APNSDeviceResult, APNSError>

    init(index: Int, push: APNSDevicePush, result: Result<APNSResponse, APNSError>) {
        self.index = index
        self.push = push
        self.result = result.map { response in
            APNSDeviceResult(
                apnsID: response.apnsID ?? push.apnsID?.uuidString.lowercased() ?? "",
                uniqueID: response.uniqueID
            )
        }
    }
}
