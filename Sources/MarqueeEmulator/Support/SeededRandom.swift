/// SplitMix64: a small generator whose sequence is fixed by its seed, for draws a run must repeat
/// (``EmulatedAppShares/seed``). Not for anything secret.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A fraction in [0, 1) from the top 53 bits.
    mutating func nextFraction() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }
}
