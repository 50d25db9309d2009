import Foundation
import HTTPTypes
import Synchronization

/// What `MarqueeClientMiddleware` saw of the last answer inside one `MarqueeClient.send`: the
/// status, the request ID and the raw JSON body. The generated client decodes bodies into values
/// and drops the bytes; scripts asking for `--json` want the server's document as it was sent.
///
/// A task-local, so that concurrent calls on one client each see their own answer.
final class ResponseRecorder: Sendable {
    struct Recording: Sendable {
        var status: Int
        var requestID: String?
        var json: Data?
    }

    @TaskLocal static var current: ResponseRecorder?

    private let state = Mutex<Recording?>(nil)

    var recording: Recording? { state.withLock { $0 } }

    func record(_ recording: Recording) {
        state.withLock { $0 = recording }
    }
}
