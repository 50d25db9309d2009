import Foundation

/// What became of one push of a batch.
public struct APNSPushOutcome: Sendable {
    /// The push's position in what the batch was given: in the sequence for `send(_:window:)`, and
    /// counted across pages for `send(pages:window:)` (the first push of a page follows the last of
    /// the page before), so it stays unique and stable for the whole audience.
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
