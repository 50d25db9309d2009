import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom` on Linux, through
    /// glibc's `arc4random_buf`). Foundation's
    /// `UUID.random()` on Linux opens, reads and closes `/dev/urandom` for each one, and every request
    /// takes at least one (its request ID; a broadcast's `apns-id`, a row's ID): one read of the
    /// generator for its 16 bytes where Foundation made three system calls and Swift's
    /// `SystemRandomNumberGenerator` two (8 bytes each).
    public static func random() -> UUID {
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            fill(raw)
            // RFC 9562: the version (4) in the high nibble of byte 6, the variant (10) in the
            // two high bits of byte 8.
            raw[6] = raw[6] & 0x0F | 0x40
            raw[8] = raw[8] & 0x3F | 0x80
        }
        return UUID(uuid: bytes)
    }

    private static func fill(_ raw: UnsafeMutableRawBufferPointer) {
        #if canImport(Glibc)
        // glibc's `arc4random_buf` (2.36 and later) is one `getrandom` for the 16 bytes.
        if let base = raw.baseAddress {
            arc4random_buf(base, raw.count)
            return
        }
        #endif
        var generator = SystemRandomNumberGenerator()
        var words = (generator.next() as UInt64, generator.next() as UInt64)
        withUnsafeBytes(of: &words) { raw.copyMemory(from: $0) }
    }
}
