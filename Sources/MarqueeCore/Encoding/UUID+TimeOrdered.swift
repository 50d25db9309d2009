import Foundation

extension UUID {
    /// A time-ordered (version 7) UUID: the milliseconds since 1970 of `date` in its first 48 bits,
    /// big-endian, then 74 random bits (RFC 9562, 5.7). For row IDs written in bulk, where a random
    /// key scatters each batch over the whole primary key: a start's 640 activity rows touched some
    /// 570 leaf pages of `activities_pkey` (600,000 rows; a full-page image in the WAL for each page's
    /// first change after a checkpoint, a read for each one out of shared buffers), 70–190 ms of one
    /// PostgreSQL process and 2.5–3.5 MB of WAL, where IDs of one millisecond land on a page or two
    /// (11–26 ms, 0.37–0.56 MB; `EXPLAIN (ANALYZE, BUFFERS, WAL)` on a match-day soak's database). IDs
    /// of the same millisecond are in random order between themselves. A date before 1970 counts as
    /// 1970.
    public static func timeOrdered(at date: Date) -> UUID {
        var uuid = UUID.random().uuid
        let milliseconds = UInt64(max(0, (date.timeIntervalSince1970 * 1000).rounded(.down)))
        withUnsafeMutableBytes(of: &uuid) { raw in
            for index in 0..<6 {
                raw[index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * (5 - UInt64(index))))
            }
            // The version (7) in the high nibble of byte 6; `random()` set the variant already.
            raw[6] = raw[6] & 0x0F | 0x70
        }
        return UUID(uuid: uuid)
    }
}
