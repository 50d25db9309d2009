import NIOCore

/// HPACK (RFC 7541) for the header blocks an APNs server answers with, decoded straight into the
/// fields of the answer the client reads (`APNSResponse`: the status and the `apns-` identifiers).
///
/// Every representation is read and the dynamic table kept as §4 asks, so that later blocks decode
/// right, but no header list is built: a field the client does not read costs its bytes' decoding
/// and, if it is to be indexed, a copy into the table; one it reads becomes a `String` once.
/// Decoding the answers was about a tenth of a fan-out's time through NIOHPACK's general decoder
/// (a list of `String`s per block, every field's table entry its own storage, the Huffman code
/// decoded a nibble at a time through generic option sets).
struct APNSHPACKDecoder {
    enum DecodingError: Error, Equatable, CustomStringConvertible {
        case truncated
        case integerOverflow
        case invalidIndex(Int)
        case huffman(APNSHPACKHuffman.DecodingError)
        case tableSizeUpdateAboveSetting(Int, allowed: Int)
        case tableSizeUpdateAfterField
        case headerListTooLarge(limit: Int)

        var description: String {
            switch self {
            case .truncated: "a header block ends inside a field"
            case .integerOverflow: "an integer beyond 2^28"
            case .invalidIndex(let index): "index \(index) is in neither table"
            case .huffman(.endOfStringSymbol): "a Huffman-coded string holds EOS"
            case .huffman(.invalidPadding): "a Huffman-coded string's padding is not a prefix of EOS under 8 bits"
            case .tableSizeUpdateAboveSetting(let size, let allowed):
                "a dynamic table size update to \(size) above the \(allowed) this client's settings allow"
            case .tableSizeUpdateAfterField: "a dynamic table size update after a field"
            case .headerListTooLarge(let limit): "a header list over the \(limit) octets this client's settings allow"
            }
        }
    }

    private var table: APNSHPACKDynamicTable
    /// SETTINGS_HEADER_TABLE_SIZE as this client sent it: the most a size update may ask for.
    let allowedTableSize: Int
    /// SETTINGS_MAX_HEADER_LIST_SIZE as this client sent it (§4.1's sizes).
    let maximumHeaderListSize: Int
    /// A field's name and value while it is read: reused, block after block.
    private var name: [UInt8] = []
    private var value: [UInt8] = []
    /// The last block's Huffman-coded strings, most of which the next block repeats.
    private var huffmanRepeats = APNSHPACKHuffmanRepeats()

    init(allowedTableSize: Int = 4096, maximumHeaderListSize: Int) {
        self.table = APNSHPACKDynamicTable(maximumSize: allowedTableSize)
        self.allowedTableSize = allowedTableSize
        self.maximumHeaderListSize = maximumHeaderListSize
        name.reserveCapacity(64)
        value.reserveCapacity(128)
    }

    /// The dynamic table's size (§4.1) and entries, for tests.
    var tableSize: Int { table.size }
    var tableCount: Int { table.count }

    /// Decodes one complete header block (HEADERS and its CONTINUATIONs) into the answer's fields.
    mutating func decodeResponse(_ block: ByteBuffer) throws(DecodingError) -> APNSResponse {
        let result = block.withUnsafeReadableBytes { bytes in
            Result { () throws(DecodingError) in try decode(bytes) }
        }
        return try result.get()
    }

    private mutating func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodingError) -> APNSResponse {
        var response = APNSResponse(status: 0)
        var listSize = 0
        var position = 0
        var fieldSeen = false
        var huffmanPlace = 0
        while position < bytes.count {
            let first = bytes[position]
            if first & 0x80 != 0 {
                // Indexed field (§6.1).
                let index = try Self.integer(bytes, &position, prefixBits: 7)
                try indexedField(index, into: &response, listSize: &listSize)
            } else if first & 0xE0 == 0x20 {
                // Dynamic table size update (§6.3): only before the block's first field (§4.2).
                guard !fieldSeen else { throw .tableSizeUpdateAfterField }
                let size = try Self.integer(bytes, &position, prefixBits: 5)
                guard size <= allowedTableSize else {
                    throw .tableSizeUpdateAboveSetting(size, allowed: allowedTableSize)
                }
                table.resize(to: size)
                continue
            } else {
                // Literal with incremental indexing (§6.2.1), without indexing or never indexed (§6.2.2-3).
                let indexed = first & 0xC0 == 0x40
                let nameIndex = try Self.integer(bytes, &position, prefixBits: indexed ? 6 : 4)
                name.removeAll(keepingCapacity: true)
                if nameIndex == 0 {
                    try Self.readString(bytes, &position, into: &name, &huffmanRepeats, place: &huffmanPlace)
                } else {
                    try copyName(at: nameIndex)
                }
                value.removeAll(keepingCapacity: true)
                try Self.readString(bytes, &position, into: &value, &huffmanRepeats, place: &huffmanPlace)
                listSize += name.count + value.count + 32
                guard listSize <= maximumHeaderListSize else { throw .headerListTooLarge(limit: maximumHeaderListSize) }
                let (name, value) = (self.name, self.value)
                name.withUnsafeBufferPointer { name in
                    value.withUnsafeBufferPointer { value in
                        Self.read(name: name, value: value, into: &response)
                        if indexed { table.add(name: name, value: value) }
                    }
                }
            }
            fieldSeen = true
        }
        return response
    }

    private mutating func indexedField(
        _ index: Int,
        into response: inout APNSResponse,
        listSize: inout Int
    ) throws(DecodingError) {
        if index >= 1 && index <= APNSHPACKStaticTable.count {
            let entry = APNSHPACKStaticTable.entries[index - 1]
            listSize += entry.name.utf8CodeUnitCount + entry.value.utf8CodeUnitCount + 32
            if let status = APNSHPACKStaticTable.status(at: index) { response.status = status }
        } else {
            let entry = try dynamicEntry(at: index)
            listSize += entry.size
            table.withBytes(of: entry) { name, value in Self.read(name: name, value: value, into: &response) }
        }
        guard listSize <= maximumHeaderListSize else { throw .headerListTooLarge(limit: maximumHeaderListSize) }
    }

    /// An indexed name, copied: the entry it comes from may be evicted by the field's own insertion (§4.4).
    private mutating func copyName(at index: Int) throws(DecodingError) {
        if index <= APNSHPACKStaticTable.count {
            APNSHPACKStaticTable.entries[index - 1].name.withUTF8Buffer { name.append(contentsOf: $0) }
        } else {
            let entry = try dynamicEntry(at: index)
            table.withBytes(of: entry) { entryName, _ in name.append(contentsOf: entryName) }
        }
    }

    /// The dynamic table's entry at `index` of the index space both tables share (§2.3.3).
    private func dynamicEntry(at index: Int) throws(DecodingError) -> APNSHPACKDynamicTable.Entry {
        guard let entry = table.entry(at: index - APNSHPACKStaticTable.count - 1) else { throw .invalidIndex(index) }
        return entry
    }

    /// A string literal (§5.2), Huffman-coded or not, appended to `output`; `place` counts the
    /// block's Huffman-coded strings.
    private static func readString(
        _ bytes: UnsafeRawBufferPointer,
        _ position: inout Int,
        into output: inout [UInt8],
        _ repeats: inout APNSHPACKHuffmanRepeats,
        place: inout Int
    ) throws(DecodingError) {
        guard position < bytes.count else { throw .truncated }
        let huffman = bytes[position] & 0x80 != 0
        let length = try integer(bytes, &position, prefixBits: 7)
        guard length <= bytes.count - position else { throw .truncated }
        let string = UnsafeRawBufferPointer(rebasing: bytes[position..<position + length])
        position += length
        if huffman {
            do {
                try repeats.decode(string, at: place, appendingTo: &output)
            } catch {
                throw .huffman(error)
            }
            place += 1
        } else {
            output.append(contentsOf: string)
        }
    }

    /// An integer with an N-bit prefix (§5.1), up to 2^28: no length or index in an answer comes near.
    private static func integer(
        _ bytes: UnsafeRawBufferPointer,
        _ position: inout Int,
        prefixBits: Int
    ) throws(DecodingError) -> Int {
        let limit = 1 << prefixBits - 1
        var value = Int(bytes[position]) & limit
        position += 1
        guard value == limit else { return value }
        var shift = 0
        while true {
            guard position < bytes.count else { throw .truncated }
            let byte = bytes[position]
            position += 1
            value += Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
            guard shift <= 21 else { throw .integerOverflow }
        }
    }

    private static let statusName = Array(":status".utf8)
    private static let apnsIDName = Array("apns-id".utf8)
    private static let uniqueIDName = Array("apns-unique-id".utf8)
    private static let requestIDName = Array("apns-request-id".utf8)
    private static let channelIDName = Array("apns-channel-id".utf8)

    /// The fields the client reads, by name; HTTP/2 names arrive in lower case (RFC 9113 §8.2.1).
    private static func read(
        name: UnsafeBufferPointer<UInt8>,
        value: UnsafeBufferPointer<UInt8>,
        into response: inout APNSResponse
    ) {
        switch name.count {
        case 7:
            if name.elementsEqual(statusName) {
                response.status = status(value)
            } else if name.elementsEqual(apnsIDName) {
                response.apnsID = String(decoding: value, as: UTF8.self)
            }
        case 14:
            if name.elementsEqual(uniqueIDName) { response.uniqueID = String(decoding: value, as: UTF8.self) }
        case 15:
            if name.elementsEqual(requestIDName) {
                response.requestID = String(decoding: value, as: UTF8.self)
            } else if name.elementsEqual(channelIDName) {
                response.channelID = String(decoding: value, as: UTF8.self)
            }
        default:
            break
        }
    }

    /// Three digits, or 0: what the connection reads as a stream without a status.
    private static func status(_ value: UnsafeBufferPointer<UInt8>) -> Int {
        guard value.count == 3 else { return 0 }
        var status = 0
        for digit in value {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return 0 }
            status = status * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return status
    }
}
