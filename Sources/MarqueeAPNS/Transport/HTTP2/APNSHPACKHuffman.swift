/// HPACK's Huffman code (RFC 7541 §5.2, Appendix B) decoded: the header blocks APNs answers with
/// carry Huffman-coded strings.
///
/// The code is canonical (the codes of each length follow one another in symbol order, and each
/// length's first code follows the last of the length before, shifted), so it is decoded from its
/// lengths alone: for the next 30 bits (the longest code) the symbol's length is the first whose
/// limit the bits are under, and its index within that length is the bits' distance from the
/// length's first code. The symbols of a response (digits, lower-case hex, `-`) have codes of 5 and
/// 6 bits, found at the first or second limit.
enum APNSHPACKHuffman {
    /// The code length of each symbol, 0 to 255 and EOS (256), in symbol order (Appendix B).
    static let codeLengths: [UInt8] = [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28,
        28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6,
        5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
        7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5,
        6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23,
        24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23,
        21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25,
        19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23,
        26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
        30,
    ]

    static let endOfString = 256
    static let longestCode = 30

    /// The decoding tables, derived once from `codeLengths`.
    struct Tables: Sendable {
        /// For each length, the bound (left-aligned in 30 bits) below which the next 30 bits are a
        /// code of that length or shorter.
        var limits: [UInt32]
        /// For each length, its first code and the position of its first symbol in `symbols`.
        var firstCodes: [UInt32]
        var offsets: [Int]
        /// The symbols ordered by code: by length, then by symbol.
        var symbols: [UInt16]

        init(codeLengths: [UInt8]) {
            let longest = APNSHPACKHuffman.longestCode
            var counts = [Int](repeating: 0, count: longest + 1)
            for length in codeLengths { counts[Int(length)] += 1 }
            symbols = (0..<codeLengths.count).sorted {
                (codeLengths[$0], $0) < (codeLengths[$1], $1)
            }.map { UInt16($0) }
            limits = [UInt32](repeating: 0, count: longest + 1)
            firstCodes = [UInt32](repeating: 0, count: longest + 1)
            offsets = [Int](repeating: 0, count: longest + 1)
            var code: UInt32 = 0
            var offset = 0
            for length in 1...longest {
                firstCodes[length] = code
                offsets[length] = offset
                code += UInt32(counts[length])
                offset += counts[length]
                limits[length] = code << UInt32(longest - length)
                code <<= 1
            }
        }
    }

    static let tables = Tables(codeLengths: codeLengths)

    /// Why a Huffman-coded string could not be decoded.
    enum DecodingError: Error, Equatable {
        /// The string holds the EOS symbol, which §5.2 makes an error.
        case endOfStringSymbol
        /// The bits after the last symbol are not a prefix of EOS shorter than 8 bits.
        case invalidPadding
    }

    /// Decodes `bytes`, appending the symbols to `output`.
    static func decode(_ bytes: UnsafeRawBufferPointer, appendingTo output: inout [UInt8]) throws(DecodingError) {
        let tables = Self.tables
        let longest = longestCode
        try tables.limits.withUnsafeBufferPointer { limits throws(DecodingError) in
            try tables.symbols.withUnsafeBufferPointer { symbols throws(DecodingError) in
                // `bits` holds the unread bits in its low `count` bits; older bits fall off its top.
                var bits: UInt64 = 0
                var count = 0
                var next = 0
                while true {
                    while count <= 56, next < bytes.count {
                        bits = bits << 8 | UInt64(bytes[next])
                        next += 1
                        count += 8
                    }
                    if count == 0 { return }
                    // The next 30 bits; at the end the missing ones are read as ones, EOS's bits.
                    let window: UInt32
                    if count >= longest {
                        window = UInt32(truncatingIfNeeded: bits >> UInt64(count - longest)) & 0x3FFF_FFFF
                    } else {
                        let missing = longest - count
                        window =
                            (UInt32(truncatingIfNeeded: bits) << UInt32(missing) | (1 << UInt32(missing) - 1))
                            & 0x3FFF_FFFF
                    }
                    var length = 5
                    while window >= limits[length] { length += 1 }
                    if length > count {
                        // No whole symbol left: what remains is padding, fewer than 8 ones.
                        let mask: UInt64 = 1 << UInt64(count) - 1
                        guard count < 8, bits & mask == mask else { throw .invalidPadding }
                        return
                    }
                    let index =
                        tables.offsets[length] + Int(window >> UInt32(longest - length) - tables.firstCodes[length])
                    let symbol = symbols[index]
                    guard symbol != UInt16(endOfString) else { throw .endOfStringSymbol }
                    output.append(UInt8(truncatingIfNeeded: symbol))
                    count -= length
                }
            }
        }
    }
}
