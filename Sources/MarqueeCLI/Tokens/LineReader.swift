import Foundation

/// Reads a file line by line in fixed-size chunks, so that a file of any size takes the memory
/// of one chunk and one line. Lines end with `\n` (a `\r` before it is dropped); the last line
/// may end without one.
struct LineReader {
    struct Line {
        /// 1-based, as editors and `sed -n` count.
        var number: Int
        var text: String
        /// Bytes of the file read up to the end of this line.
        var offset: Int64
        /// The line was longer than `maximumLineBytes`; `text` is only its start.
        var truncated: Bool
    }

    private let handle: FileHandle
    private let chunkSize: Int
    private let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var offset: Int64 = 0
    private var lineNumber = 0
    private var atEnd = false

    init(handle: FileHandle, chunkSize: Int = 256 << 10, maximumLineBytes: Int = 1 << 20) {
        self.handle = handle
        self.chunkSize = chunkSize
        self.maximumLineBytes = maximumLineBytes
    }

    /// The next line, or nil at the end of the file.
    mutating func next() throws -> Line? {
        var truncated = false
        var kept: [UInt8] = []
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let bytes = buffer[start..<newline]
                offset += Int64(newline + 1 - start)
                start = newline + 1
                return makeLine(truncated ? kept : kept + bytes, truncated: truncated)
            }
            // No newline in what is buffered: keep the partial line (up to the maximum) and read on.
            let pending = buffer[start...]
            offset += Int64(pending.count)
            if kept.count + pending.count > maximumLineBytes {
                kept += pending.prefix(max(0, maximumLineBytes - kept.count))
                truncated = true
            } else if !truncated {
                kept += pending
            }
            buffer.removeAll(keepingCapacity: true)
            start = 0
            if atEnd {
                return kept.isEmpty && !truncated ? nil : makeLine(kept[...], truncated: truncated)
            }
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            if chunk.isEmpty { atEnd = true } else { buffer.append(contentsOf: chunk) }
        }
    }

    private mutating func makeLine(_ bytes: some Collection<UInt8>, truncated: Bool) -> Line {
        lineNumber += 1
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasSuffix("\r") { text.removeLast() }
        return Line(number: lineNumber, text: text, offset: offset, truncated: truncated)
    }
}
