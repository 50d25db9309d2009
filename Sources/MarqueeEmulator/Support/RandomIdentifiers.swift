import Foundation
import MarqueeCore
import Synchronization

/// Identifiers the emulator mints: tokens are random bytes shown as lowercase hex, channel IDs are
/// base64 of random bytes (as Apple's look), request IDs are lowercase canonical UUIDs.
enum RandomIdentifiers {
    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A push token: `byteCount` random bytes in lowercase hex (32 bytes: 64 characters, as usual).
    static func token(byteCount: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return Hex.encode((0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// A channel ID: standard base64 (`+`, `/` and `=` included) of `byteCount` random bytes. Apple
    /// publishes no format; the IDs its servers issue are 16 bytes, 24 characters (§6a).
    static func channelID(byteCount: Int = 16) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
    }

    private static let uuidSeed: (UInt64, UInt64) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), generator.next())
    }()
    private static let uuidCounter = Atomic<UInt64>(0)

    /// A lowercase canonical (version 4 shaped) UUID, the form of `apns-id`, `apns-request-id` and
    /// `apns-unique-id`. These name responses, not secrets, so they come from a counter scrambled
    /// with a random per-process seed (SplitMix64 is a bijection: no two are equal) instead of a
    /// system call per ID; Foundation's `UUID` also opens `/dev/urandom` and formats through
    /// `printf`, which cost more than the rest of a request.
    static func uuid() -> String {
        let n = uuidCounter.wrappingAdd(1, ordering: .relaxed).newValue
        let high = (splitMix64(uuidSeed.0 &+ n) & ~0xF000) | 0x4000  // version 4
        let low = (splitMix64(uuidSeed.1 &+ n) & ~(0xC << 60)) | (0x8 << 60)  // RFC 4122 variant
        return String(unsafeUninitializedCapacity: 36) { buffer in
            var position = 0
            func append(_ word: UInt64) {
                for digit in 0..<16 {
                    if position == 8 || position == 13 || position == 18 || position == 23 {
                        buffer[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    buffer[position] = hexDigits[Int((word >> UInt64(60 - 4 * digit)) & 0xF)]
                    position += 1
                }
            }
            append(high)
            append(low)
            return position
        }
    }

    private static func splitMix64(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Whether `text` is a canonical 8-4-4-4-12 hexadecimal UUID (`apns-id`, `apns-request-id`).
    static func isCanonicalUUID(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return false }
        for (offset, byte) in utf8.enumerated() {
            switch offset {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                    UInt8(ascii: "A")...UInt8(ascii: "F"):
                    continue
                default:
                    return false
                }
            }
        }
        return true
    }

    /// `text` in lower case when it is a non-empty, even-length hexadecimal string (a device
    /// token's shape; APNs does not fix the length), else `nil`. One pass, no Unicode case mapping.
    static func normalizedHexToken(_ text: Substring) -> String? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count % 2 == 0 else { return nil }
        var isHex = true
        let token = String(unsafeUninitializedCapacity: utf8.count) { buffer in
            var position = 0
            for byte in utf8 {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                    buffer[position] = byte
                case UInt8(ascii: "A")...UInt8(ascii: "F"):
                    buffer[position] = byte | 0x20
                default:
                    isHex = false
                    return 0
                }
                position += 1
            }
            return position
        }
        return isHex ? token : nil
    }
}
