import NIOCore
import NIOHTTP2
import Testing

@testable import MarqueeAPNS

/// Send-side flow control as decisions: what may go now, what waits, and for what.
@Suite("HTTP/2 send windows")
struct APNSHTTP2SendWindowsTests {
    private func data(_ stream: HTTP2StreamID, _ length: Int, end: Bool = true) -> APNSHTTP2SendWindows.Data {
        .init(streamID: stream, bytes: ByteBuffer(repeating: 0x78, count: length), endStream: end, promise: nil)
    }

    /// Sends `item` and returns what went, as (stream, length, endStream).
    private func send(
        _ windows: inout APNSHTTP2SendWindows,
        _ item: APNSHTTP2SendWindows.Data
    ) -> [(HTTP2StreamID, Int, Bool)] {
        var sent: [(HTTP2StreamID, Int, Bool)] = []
        #expect(windows.send(item) { sent.append(($0.streamID, $0.bytes.readableBytes, $0.endStream)) })
        return sent
    }

    @Test("a body that fits goes whole at once, and uses up both windows")
    func fits() {
        var windows = APNSHTTP2SendWindows()
        windows.streamOpened(1)
        let sent = send(&windows, data(1, 4_000))
        #expect(sent.count == 1 && sent[0].1 == 4_000 && sent[0].2)
        #expect(windows.connectionWindow == 65_535 - 4_000)
        #expect(windows.waitingCount == 0)
    }

    @Test("DATA for a stream that is not open is refused, not queued")
    func notOpen() {
        var windows = APNSHTTP2SendWindows()
        #expect(!windows.send(data(1, 10)) { _ in Issue.record("nothing may be sent") })
        #expect(windows.waitingCount == 0)
    }

    @Test("past the connection window, bodies wait in order and go as the connection's window reopens")
    func connectionWindow() throws {
        var windows = APNSHTTP2SendWindows()
        for stream in [1, 3, 5] as [HTTP2StreamID] { windows.streamOpened(stream) }
        #expect(send(&windows, data(1, 16_384)).count == 1)
        #expect(send(&windows, data(3, 16_384)).count == 1)
        #expect(send(&windows, data(3, 16_384, end: false)).count == 1)
        // 16,383 bytes of connection window left: stream 5's 16,384 goes as 16,383 and 1.
        var sent = send(&windows, data(5, 16_384))
        #expect(sent.map(\.1) == [16_383] && sent.map(\.2) == [false])
        #expect(windows.waitingCount == 1)
        try windows.windowUpdate(streamID: .rootStream, increment: 100) {
            sent.append(($0.streamID, $0.bytes.readableBytes, $0.endStream))
        }
        #expect(sent.map(\.1) == [16_383, 1] && sent.last?.2 == true)
        #expect(windows.waitingCount == 0)
    }

    @Test("a stream whose own window is shut does not hold up the next stream")
    func streamWindow() throws {
        var windows = APNSHTTP2SendWindows()
        try windows.initialStreamWindowChanged(to: 100) { _ in }
        windows.streamOpened(1)
        windows.streamOpened(3)
        #expect(send(&windows, data(1, 150)).map(\.1) == [100])
        #expect(send(&windows, data(3, 50)).map(\.0) == [3])
        var sent: [Int] = []
        try windows.windowUpdate(streamID: 1, increment: 50) { sent.append($0.bytes.readableBytes) }
        #expect(sent == [50])
    }

    @Test("a larger SETTINGS_INITIAL_WINDOW_SIZE opens the open streams' windows by the difference")
    func initialWindowRaised() throws {
        var windows = APNSHTTP2SendWindows()
        try windows.initialStreamWindowChanged(to: 0) { _ in }
        windows.streamOpened(1)
        #expect(send(&windows, data(1, 10)).isEmpty)
        var sent: [Int] = []
        try windows.initialStreamWindowChanged(to: 10) { sent.append($0.bytes.readableBytes) }
        #expect(sent == [10])
    }

    @Test("a body larger than the server's frame size goes in frames of that size")
    func frameSize() {
        var windows = APNSHTTP2SendWindows()
        windows.streamOpened(1)
        #expect(send(&windows, data(1, 40_000)).map(\.1) == [16_384, 16_384, 7_232])
    }

    @Test("an update that would take a window past 2^31-1 is a flow-control error")
    func overflow() {
        var windows = APNSHTTP2SendWindows()
        #expect(throws: APNSHTTP2ProtocolError.self) {
            try windows.windowUpdate(streamID: .rootStream, increment: Int(Int32.max)) { _ in }
        }
    }

    @Test("a stream the server ended takes its waiting DATA with it; GOAWAY those above its last stream")
    func endedStreams() {
        var windows = APNSHTTP2SendWindows()
        try? windows.initialStreamWindowChanged(to: 0) { _ in }
        for stream in [1, 3, 5] as [HTTP2StreamID] {
            windows.streamOpened(stream)
            _ = send(&windows, data(stream, 10))
        }
        #expect(windows.streamEnded(1).map(\.streamID) == [1])
        #expect(windows.streamsAbove(3).map(\.streamID) == [5])
        #expect(windows.removeAll().map(\.streamID) == [3])
    }
}
