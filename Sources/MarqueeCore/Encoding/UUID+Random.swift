import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's generator (`getrandom` on Linux). Foundation's
    /// `UUID.random()` on Linux opens, reads and closes `/dev/urandom` for each one, and every request
    /// takes at least one (its request ID; a broadcast's `apns-id`, a row's ID): three system
    /// calls and a file descriptor where two reads of the generator do.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            // RFC 9562: the version (4) in the high nibble of byte 6, the variant (10) in the
            // two high bits of byte 8.
            raw[6] = raw[6] & 0x0F | 0x40
            raw[8] = raw[8] & 0x3F | 0x80
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}
