import Foundation

/// A successful answer: the decoded value, and what scripts and logs want besides.
public struct MarqueeResponse<Value: Sendable>: Sendable {
    public var value: Value
    /// The HTTP status (200, 201, 207 …).
    public var status: Int
    /// The request's ID as the server echoed it in `X-Request-ID`.
    public var requestID: String?
    /// The answer's JSON body exactly as the server sent it (nil for bodies that are not JSON, such
    /// as an event stream, or for none).
    public var json: Data?

    public init(value: Value, status: Int, requestID: String?, json: Data?) {
        self.value = value
        self.status = status
        self.requestID = requestID
        self.json = json
    }
}
