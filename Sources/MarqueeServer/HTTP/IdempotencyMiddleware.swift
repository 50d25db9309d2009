import Foundation
import HTTPTypes
import Hummingbird
import MarqueeCore
import MarqueeEngine
import NIOCore

/// Honours `Idempotency-Key` on POSTs of an app's key: the first request runs and its answer is
/// kept; the same key and request again replays it (`Idempotent-Replayed: true`) without running
/// anything; the key with another request is refused (422); a retry while the first still runs
/// answers 409. Server errors (5xx) and thrown errors release the key, because they changed nothing
/// a retry should not redo.
///
/// Keys are kept per API key (the one authentication found, which runs first): the same
/// `Idempotency-Key` sent with another API key is that key's own, and its request runs through its
/// own role check. An answer that holds an API key is stored without it (`ReplayableAnswer`).
struct IdempotencyMiddleware<Context: RequestContext>: RouterMiddleware {
    let keys: IdempotencyKeys

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard request.method == .post, let key = request.headers[.idempotencyKey] else {
            return try await next(request, context)
        }
        guard let apiKey = RequestScope.current?.apiKey, let appID = apiKey.appID else {
            throw Problem(
                .invalidRequest,
                detail: "Idempotency-Key is kept per app: send it with one of the app's keys, not a deployment key",
                errors: [.init(pointer: "Idempotency-Key", detail: "needs an app's API key")]
            )
        }
        var request = request
        let body = try await request.collectBody(upTo: .max)
        let fingerprint = IdempotencyKeys.fingerprint(
            method: request.method.rawValue,
            path: request.uri.description,
            body: body.readableBytesView
        )
        let apiKeyID = apiKey.id
        switch try await keys.claim(appID: appID, apiKeyID: apiKeyID, key: key, fingerprint: fingerprint) {
        case .completed(let stored):
            var headers = HTTPFields()
            if let contentType = stored.contentType { headers[.contentType] = contentType }
            headers[.idempotentReplayed] = "true"
            return Response(
                status: HTTPResponse.Status(code: stored.status),
                headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: stored.body))
            )
        case .inProgress:
            throw Problem(
                .idempotencyInProgress,
                detail: "a request with this Idempotency-Key is still running; retry when it has answered",
                retryAfter: 1
            )
        case .mismatch:
            throw Problem(
                .idempotencyKeyReused,
                detail: "this Idempotency-Key was used with another request; use a new key for a new request",
                errors: [.init(pointer: "Idempotency-Key", detail: "already used with another request")]
            )
        case .claimed:
            break
        }
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            try? await keys.release(appID: appID, apiKeyID: apiKeyID, key: key)
            throw error
        }
        guard response.status.code < 500 else {
            try? await keys.release(appID: appID, apiKeyID: apiKeyID, key: key)
            return response
        }
        let collected = CollectedBody()
        try await response.body.write(CollectingBodyWriter(into: collected))
        let bytes = collected.bytes
        try await keys.complete(
            appID: appID,
            apiKeyID: apiKeyID,
            key: key,
            response: StoredResponse(
                status: response.status.code,
                contentType: response.headers[.contentType],
                body: ReplayableAnswer.storable(bytes) ?? []
            )
        )
        var replayable = response
        replayable.body = ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        return replayable
    }
}

/// The bytes a response body wrote, kept to be stored for replay. Written by one writer on one
/// task, then read after `write` returned: no concurrent access, hence unchecked.
private final class CollectedBody: @unchecked Sendable {
    var bytes: [UInt8] = []
}

private struct CollectingBodyWriter: ResponseBodyWriter {
    let into: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        into.bytes.append(contentsOf: buffer.readableBytesView)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
