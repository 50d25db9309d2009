import NIOCore

/// Decides when the framer may write a device push's repeating header fields as the bytes HPACK
/// wrote for them before, without encoding them again: the decision apart from the framer's I/O.
///
/// HPACK's encoding of a field depends on the connection's dynamic table, which every encoding that
/// adds to it (or a change of its size) changes. An encoding made only of indexed field
/// representations (RFC 7541 §6.1) adds nothing, so it stays what the encoder would write for the
/// same fields for as long as nothing else is added: each addition (any other header block
/// encoded, a size update) starts a new generation of the table, and bytes cached in an earlier
/// one are never written. The first push of a connection adds its fields (nothing cached), the
/// second finds them all in the table (cached), and every one after that is a copy.
struct APNSHPACKRepeatCache {
    private var generation: UInt64 = 0
    private var cached: (fields: APNSDeviceHeaderFields.Repeating, bytes: ByteBuffer, generation: UInt64)?
    /// The table's size changed and the encoder has not yet written the size update, which must
    /// open the next header block (RFC 7541 §4.2): before a device push's `:path`, not after it.
    private(set) var sizeUpdatePending = false

    /// The bytes to write for `fields`, if the table still makes them what they were.
    func bytes(for fields: APNSDeviceHeaderFields.Repeating) -> ByteBuffer? {
        guard let cached, cached.generation == generation, cached.fields == fields else { return nil }
        return cached.bytes
    }

    /// The encoder wrote `bytes` for `fields`: kept if they are table references alone, else the
    /// table changed.
    mutating func encoded(_ fields: APNSDeviceHeaderFields.Repeating, as bytes: ByteBuffer) {
        guard Self.isIndexedOnly(bytes) else {
            tableChanged()
            return
        }
        cached = (fields, bytes, generation)
    }

    /// Something else was encoded (which writes a pending size update too): what was cached may
    /// no longer be what the encoder would write.
    mutating func tableChanged() {
        generation &+= 1
        cached = nil
        sizeUpdatePending = false
    }

    /// The server changed the table's size: the encoder writes the update at the start of the next
    /// block it encodes, and the table it makes differs.
    mutating func tableSizeChanged() {
        tableChanged()
        sizeUpdatePending = true
    }

    /// Whether `bytes` is one or more indexed header field representations and nothing else: each
    /// starts with its top bit set and carries the index as an integer with a 7-bit prefix
    /// (RFC 7541 §5.1), whose continuation bytes have their top bit set but the last.
    static func isIndexedOnly(_ bytes: ByteBuffer) -> Bool {
        var iterator = bytes.readableBytesView.makeIterator()
        var fields = 0
        while let first = iterator.next() {
            guard first & 0x80 != 0 else { return false }
            fields += 1
            guard first & 0x7F == 0x7F else { continue }
            while true {
                guard let next = iterator.next() else { return false }
                if next & 0x80 == 0 { break }
            }
        }
        return fields > 0
    }
}
