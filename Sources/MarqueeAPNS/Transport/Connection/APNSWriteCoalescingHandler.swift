import NIOCore

/// Gathers the byte writes between two flushes into one buffer, so that TLS seals them as a few
/// full records instead of one record per write.
///
/// `APNSHTTP2Framer` writes every frame as its own buffer, while `NIOSSLHandler` hands each buffer
/// to BoringSSL by itself, which seals it as a record of its own: two records per push (three with
/// `NIOHTTP2Handler`, which wrote a DATA frame's header apart from its body), each with its own AEAD
/// pass and 22 bytes of framing, for APNs to open one by one. The pool writes its pushes in batches with one flush per
/// batch, so here a batch of fifty pushes leaves as three 16 KiB records rather than 150 small ones.
/// Copying a push's bytes once more (its headers and body, under a kilobyte) costs far less than
/// the records it saves, on both ends of the connection.
///
/// Placed between the TLS handler and `APNSHTTP2Framer`. Order and promises are kept: a write's
/// promise completes when the buffer that holds its bytes has been written.
final class APNSWriteCoalescingHandler: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// Past this many bytes a gathered buffer is passed on (still unflushed) and a new one begun,
    /// so that a long run of writes without a flush does not grow one buffer without bound.
    static let passOnThreshold = 64 * 1024

    private var pending: ByteBuffer?
    /// Completed with the gathered buffer's write; the promises of later writes in it cascade from it.
    private var pendingPromise: EventLoopPromise<Void>?
    /// The size of the last buffer passed on: batches are alike, so the next one starts at it
    /// rather than growing through the powers of two again.
    private var lastSize = 4096

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .byteBuffer(var bytes):
            if pending == nil {
                pending = context.channel.allocator.buffer(capacity: Swift.max(lastSize, bytes.readableBytes))
            }
            pending!.writeBuffer(&bytes)
            if let promise {
                if let pendingPromise {
                    pendingPromise.futureResult.cascade(to: promise)
                } else {
                    pendingPromise = promise
                }
            }
            if pending!.readableBytes >= Self.passOnThreshold {
                passOn(context: context)
            }
        case .fileRegion:
            // Never produced over TLS; kept in order all the same.
            passOn(context: context)
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        passOn(context: context)
        context.flush()
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        // The gathered writes go down unflushed, so the handlers below fail them as a close fails
        // any unflushed write.
        passOn(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        passOn(context: context)
    }

    private func passOn(context: ChannelHandlerContext) {
        // An empty gathered buffer still goes down when a write was gathered: its promise rides on it.
        guard let buffer = pending else { return }
        let promise = pendingPromise
        lastSize = Swift.min(Swift.max(4096, buffer.readableBytes), Self.passOnThreshold)
        pending = nil
        pendingPromise = nil
        context.write(wrapOutboundOut(.byteBuffer(buffer)), promise: promise)
    }
}
