/// The Huffman-coded strings of the header block before, each at its place in that block (the
/// first string, the second, ...) with its decoding. A server's answers repeat most of their
/// strings from one block to the next, at the same places (nginx's: the `server` and `date` it asks
/// the client to index, `content-length`, the name of each field of its own), and a string met
/// again at its place is copied rather than decoded: of an answer's Huffman-coded strings only the
/// one that differs each time (`apns-id`'s value) is decoded. A copy is the decoding itself, since
/// the same bytes decode the same way.
struct APNSHPACKHuffmanRepeats {
    /// The places remembered: an answer's block holds a handful of strings.
    static let places = 8

    private var encoded: [[UInt8]] = Array(repeating: [], count: places)
    private var decoded: [[UInt8]] = Array(repeating: [], count: places)

    init() {
        for place in 0..<Self.places {
            encoded[place].reserveCapacity(64)
            decoded[place].reserveCapacity(64)
        }
    }

    /// Appends the decoding of `string`, the Huffman-coded string at `place` in its block, to `output`.
    mutating func decode(
        _ string: UnsafeRawBufferPointer,
        at place: Int,
        appendingTo output: inout [UInt8]
    ) throws(APNSHPACKHuffman.DecodingError) {
        guard place < Self.places else {
            try APNSHPACKHuffman.decode(string, appendingTo: &output)
            return
        }
        if encoded[place].withUnsafeBytes({ $0.elementsEqual(string) }) {
            output.append(contentsOf: decoded[place])
            return
        }
        let start = output.count
        try APNSHPACKHuffman.decode(string, appendingTo: &output)
        encoded[place].removeAll(keepingCapacity: true)
        encoded[place].append(contentsOf: string)
        decoded[place].removeAll(keepingCapacity: true)
        decoded[place].append(contentsOf: output[start...])
    }
}
