import DequeModule
import NIOCore
import NIOHTTP2

/// The client's send-side HTTP/2 flow control (RFC 9113 §5.2, §6.9): how much DATA the server lets
/// it send on the connection and on each open stream, and the DATA that must wait for a
/// WINDOW_UPDATE. Pure decisions; `APNSHTTP2Framer` writes what it is told to.
///
/// A push's body (a few kilobytes) almost always fits at once: then `send` emits it whole, with no
/// queueing. DATA that does not fit waits in order and goes, cut to what the windows and the
/// server's frame size allow, as updates arrive.
struct APNSHTTP2SendWindows {
    /// A stretch of DATA for one stream, as written or as it may go now.
    struct Data {
        var streamID: HTTP2StreamID
        var bytes: ByteBuffer
        var endStream: Bool
        /// Completed when the last of these bytes has been written.
        var promise: EventLoopPromise<Void>?
    }

    /// HTTP/2's initial windows until the server's SETTINGS say otherwise.
    static let defaultWindow = 65_535
    static let maximumWindow = Int(Int32.max)

    private(set) var connectionWindow = Self.defaultWindow
    private var initialStreamWindow = Self.defaultWindow
    private var streamWindows: [HTTP2StreamID: Int] = [:]
    private var waiting: Deque<Data> = []
    /// The server's SETTINGS_MAX_FRAME_SIZE.
    var maximumFrameLength = 16_384

    var waitingCount: Int { waiting.count }

    /// A stream the client opened (its HEADERS were written).
    mutating func streamOpened(_ streamID: HTTP2StreamID) {
        streamWindows[streamID] = initialStreamWindow
    }

    /// A stream the server ended (END_STREAM or RST_STREAM): DATA still waiting for it will never
    /// be wanted, and is handed back so that its promises can be failed.
    mutating func streamEnded(_ streamID: HTTP2StreamID) -> [Data] {
        guard streamWindows.removeValue(forKey: streamID) != nil else { return [] }
        return removeWaiting { $0.streamID == streamID }
    }

    /// GOAWAY: the streams above `lastStreamID` will never be processed.
    mutating func streamsAbove(_ lastStreamID: HTTP2StreamID) -> [Data] {
        streamWindows = streamWindows.filter { $0.key <= lastStreamID }
        return removeWaiting { $0.streamID > lastStreamID }
    }

    /// Everything still waiting, when the connection goes.
    mutating func removeAll() -> [Data] {
        streamWindows.removeAll()
        defer { waiting.removeAll() }
        return Array(waiting)
    }

    /// DATA the client writes: `emit` is called with what may go now, in order. `false` if its
    /// stream is not open (never opened, or already ended by the server): then nothing is sent.
    mutating func send(_ data: Data, emit: (Data) -> Void) -> Bool {
        guard streamWindows[data.streamID] != nil else { return false }
        if waiting.isEmpty, data.bytes.readableBytes <= maximumFrameLength,
            let window = streamWindows[data.streamID], data.bytes.readableBytes <= min(window, connectionWindow)
        {
            // The usual case: a whole body that fits.
            let length = data.bytes.readableBytes
            connectionWindow -= length
            streamWindows[data.streamID] = window - length
            emit(data)
            return true
        }
        waiting.append(data)
        drain(emit: emit)
        return true
    }

    /// WINDOW_UPDATE on the connection (stream 0) or a stream.
    mutating func windowUpdate(
        streamID: HTTP2StreamID,
        increment: Int,
        emit: (Data) -> Void
    ) throws(APNSHTTP2ProtocolError) {
        if streamID == .rootStream {
            guard increment > 0, connectionWindow + increment <= Self.maximumWindow else {
                throw APNSHTTP2ProtocolError(.flowControlError, "a connection WINDOW_UPDATE of \(increment)")
            }
            connectionWindow += increment
        } else {
            // An update for a stream already ended is allowed and means nothing (§6.9).
            guard let window = streamWindows[streamID] else { return }
            guard increment > 0, window + increment <= Self.maximumWindow else {
                throw APNSHTTP2ProtocolError(.flowControlError, "a WINDOW_UPDATE of \(increment) on stream \(streamID)")
            }
            streamWindows[streamID] = window + increment
        }
        drain(emit: emit)
    }

    /// SETTINGS_INITIAL_WINDOW_SIZE changed: every open stream's window moves by the difference (§6.9.2).
    mutating func initialStreamWindowChanged(to size: Int, emit: (Data) -> Void) throws(APNSHTTP2ProtocolError) {
        guard size <= Self.maximumWindow else {
            throw APNSHTTP2ProtocolError(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE \(size)")
        }
        let delta = size - initialStreamWindow
        initialStreamWindow = size
        for streamID in streamWindows.keys {
            let window = streamWindows[streamID]! + delta
            guard window <= Self.maximumWindow else {
                throw APNSHTTP2ProtocolError(.flowControlError, "stream \(streamID)'s window past 2^31-1")
            }
            streamWindows[streamID] = window
        }
        drain(emit: emit)
    }

    /// Sends what the windows allow, oldest first; a stream whose own window is shut does not hold
    /// up the others, a shut connection window holds up all.
    private mutating func drain(emit: (Data) -> Void) {
        var index = waiting.startIndex
        while index < waiting.endIndex {
            let streamID = waiting[index].streamID
            guard let streamWindow = streamWindows[streamID] else {
                // Its stream ended meanwhile (removed by streamEnded); nothing to send.
                index += 1
                continue
            }
            let remaining = waiting[index].bytes.readableBytes
            let allowed = min(remaining, streamWindow, connectionWindow, maximumFrameLength)
            if remaining == 0 || allowed == remaining {
                // All of it (an empty END_STREAM frame needs no window).
                let data = waiting.remove(at: index)
                connectionWindow -= remaining
                streamWindows[streamID] = streamWindow - remaining
                emit(data)
                continue
            }
            if allowed > 0 {
                let part = waiting[index].bytes.readSlice(length: allowed)!
                connectionWindow -= allowed
                streamWindows[streamID] = streamWindow - allowed
                emit(Data(streamID: streamID, bytes: part, endStream: false, promise: nil))
                // Still more of this one: go round again if the windows allow.
                if connectionWindow > 0 && streamWindows[streamID]! > 0 { continue }
            }
            if connectionWindow == 0 { return }
            index += 1
        }
    }

    private mutating func removeWaiting(where matches: (Data) -> Bool) -> [Data] {
        guard waiting.contains(where: matches) else { return [] }
        let removed = Array(waiting.lazy.filter(matches))
        waiting.removeAll(where: matches)
        return removed
    }
}
