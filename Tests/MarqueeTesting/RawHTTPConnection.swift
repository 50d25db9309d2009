import Foundation
import NIOCore
import NIOPosix

/// One TCP connection to a test server, written and read byte by byte: what a slow, sloppy or
/// hostile client does (headers without their body, a body that stops, a connection left idle),
/// which an HTTP client library never does.
public struct RawHTTPConnection: Sendable {
    /// What was read, and whether the server closed the connection.
    public struct Reading: Sendable {
        public var bytes: [UInt8]
        public var closedByServer: Bool
        public var text: String { String(decoding: bytes, as: UTF8.self) }
        /// The status of the first answer, if one arrived.
        public var status: Int? {
            guard text.hasPrefix("HTTP/1.1 "), text.utf8.count >= 12 else { return nil }
            return Int(text.dropFirst(9).prefix(3))
        }
        /// A header of the first answer, by case-insensitive name.
        public func header(_ name: String) -> String? {
            let head = text.components(separatedBy: "\r\n\r\n").first ?? ""
            for line in head.components(separatedBy: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                    return parts[1].trimmingCharacters(in: .whitespaces)
                }
            }
            return nil
        }
    }

    public typealias Writer = NIOAsyncChannelOutboundWriter<ByteBuffer>
    public typealias Inbound = NIOAsyncChannelInboundStream<ByteBuffer>

    /// Connects to the server at `baseURL` (`http://host:port`) and runs `body` with the
    /// connection's two halves; the connection is closed afterwards.
    public static func with<Result: Sendable>(
        _ baseURL: String,
        _ body: (Inbound, Writer) async throws -> Result
    ) async throws -> Result {
        guard let url = URL(string: baseURL), let host = url.host, let port = url.port else {
            throw TestSetupError("not a base URL: \(baseURL)")
        }
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: host, port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            try await body(inbound, outbound)
        }
    }

    /// Reads until the server closes the connection, or `patience` passes (a failure's bound, not
    /// a wait: a passing test returns as soon as the server closes), or `enough` says to stop.
    public static func read(
        _ inbound: Inbound,
        patience: Duration = .seconds(60),
        until enough: @escaping @Sendable ([UInt8]) -> Bool = { _ in false }
    ) async throws -> Reading {
        try await withThrowingTaskGroup(of: Reading?.self) { group in
            group.addTask {
                var bytes: [UInt8] = []
                do {
                    for try await buffer in inbound {
                        bytes += buffer.readableBytesView
                        if enough(bytes) { return Reading(bytes: bytes, closedByServer: false) }
                    }
                } catch let error as IOError where error.errnoCode == ECONNRESET {
                    // A reset is a close too (the server closed with bytes of ours unread).
                }
                return Reading(bytes: bytes, closedByServer: true)
            }
            group.addTask {
                try await Task.sleep(for: patience)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let reading = first else {
                throw TestSetupError("the server neither answered nor closed the connection within \(patience)")
            }
            return reading
        }
    }

    /// Whether `bytes` hold one whole answer's head.
    public static func hasHead(_ bytes: [UInt8]) -> Bool {
        String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n")
    }
}

extension NIOAsyncChannelOutboundWriter<ByteBuffer> {
    /// Writes `text` as it is (UTF-8).
    public func send(_ text: String) async throws {
        try await write(ByteBuffer(string: text))
    }

    public func send(bytes: [UInt8]) async throws {
        try await write(ByteBuffer(bytes: bytes))
    }
}
