import Foundation
import MarqueeCore

/// What became of one push of a batch. The push itself is not carried back: the caller has it at
/// `index`, and a copy per outcome would cost a fan-out retains and releases for nothing.
public struct APNSPushOutcome: Sendable {
    /// The push's position in what the batch was given: in the sequence for `send(_:window:)`, and
    /// counted across pages for `send(pages:window:)` (the first push of a page follows the last of
    /// the page before), so it stays unique and stable for the whole audience.
    public var index: Int
    public var result: Result<APNSDeviceResult, APNSError>

    /// An outcome made from values: what a stand-in for `APNSClient` (an engine test's fake
    /// APNs) returns.
    public init(index: Int, result: Result<APNSDeviceResult, APNSError>) {
        self.index = index
        self.result = result
    }

    init(index: Int, push: APNSDevicePush, result: Result<APNSResponse, APNSError>) {
        self.index = index
        self.result = result.map { response in
            APNSDeviceResult(
                apnsID: response.apnsID ?? push.apnsID?.lowercasedText ?? "",
                uniqueID: response.uniqueID
            )
        }
    }
}
