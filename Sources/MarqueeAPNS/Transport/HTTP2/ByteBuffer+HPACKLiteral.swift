import NIOCore

extension ByteBuffer {
    /// A literal header field without indexing (RFC 7541 §6.2.2) whose name is entry `nameIndex` of
    /// the static table, its value as a plain string (no Huffman coding: for a per-request value
    /// such as a token, a copy here and on the server's side costs less than the bytes it saves).
    mutating func writeHPACKLiteralWithoutIndexing(nameIndex: Int, value: String) {
        writeHPACKInteger(nameIndex, prefixBits: 4, flags: 0x00)
        writeHPACKString(value)
    }

    /// A literal header field without indexing with a literal name.
    mutating func writeHPACKLiteralWithoutIndexing(name: String, value: String) {
        writeInteger(UInt8(0x00))
        writeHPACKString(name)
        writeHPACKString(value)
    }

    /// A string literal (§5.2), not Huffman-coded: its length with a 7-bit prefix, then its bytes.
    private mutating func writeHPACKString(_ string: String) {
        writeHPACKInteger(string.utf8.count, prefixBits: 7, flags: 0x00)
        writeString(string)
    }

    /// An integer with an N-bit prefix (§5.1), `flags` in the first byte's bits above the prefix.
    mutating func writeHPACKInteger(_ value: Int, prefixBits: Int, flags: UInt8) {
        precondition(value >= 0 && (1...8).contains(prefixBits))
        let limit = (1 << prefixBits) - 1
        guard value >= limit else {
            writeInteger(flags | UInt8(value))
            return
        }
        writeInteger(flags | UInt8(limit))
        var rest = value - limit
        while rest >= 0x80 {
            writeInteger(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        writeInteger(UInt8(rest))
    }
}
