import MarqueeCore

/// A pattern that is one run of a character class, read without a regular expression: `^[C]{m,n}$`
/// (also `{m}`, `+`, `*`), `^([C]{k}){m,n}$` (hex pairs), and `^[^C]*$` or `+` for a class of
/// excluded ASCII characters. Positive classes are ASCII. `accepts` is only ever true for text the
/// pattern matches; nil for any other pattern, which `SchemaPattern` leaves to the expression.
struct SchemaPatternRun: Sendable {
    /// The ASCII characters of the class, by code.
    private var members = [Bool](repeating: false, count: 128)
    private var negated = false
    /// Characters per repetition (`k` of `([C]{k})`; 1 for a plain run).
    private var unit = 1
    private var minimum = 0
    /// Nil: no upper bound.
    private var maximum: Int?

    init?(_ pattern: String) {
        var scanner = PatternScanner(Array(pattern.utf8))
        guard scanner.take(UInt8(ascii: "^")) else { return nil }
        let grouped = scanner.take(UInt8(ascii: "("))
        guard scanner.take(UInt8(ascii: "[")) else { return nil }
        negated = scanner.take(UInt8(ascii: "^"))
        while let byte = scanner.peek(), byte != UInt8(ascii: "]") {
            guard let low = scanner.classCharacter() else { return nil }
            var high = low
            if scanner.peek() == UInt8(ascii: "-"), scanner.peek(at: 1) != UInt8(ascii: "]") {
                scanner.advance()
                guard let end = scanner.classCharacter(), end >= low else { return nil }
                high = end
            }
            for code in low...high { members[Int(code)] = true }
        }
        guard scanner.take(UInt8(ascii: "]")) else { return nil }
        if grouped {
            // `([C]{k}){m,n}`: k characters at a time.
            guard !negated, let repetition = scanner.bounds(), repetition.high == repetition.low, repetition.low > 0,
                scanner.take(UInt8(ascii: ")"))
            else { return nil }
            unit = repetition.low
        }
        if scanner.take(UInt8(ascii: "+")) {
            minimum = 1
        } else if scanner.take(UInt8(ascii: "*")) {
            minimum = 0
        } else if let bounds = scanner.bounds() {
            // A negated class counts code points, not bytes: bounds are left to the expression.
            guard !negated else { return nil }
            minimum = bounds.low
            maximum = bounds.high
        } else {
            return nil
        }
        guard scanner.take(UInt8(ascii: "$")), scanner.atEnd else { return nil }
    }

    func accepts(_ text: String) -> Bool {
        var count = 0
        for byte in text.utf8 {
            if negated {
                // A byte past ASCII belongs to a character outside every class written here.
                if byte < 128, members[Int(byte)] { return false }
            } else {
                guard byte < 128, members[Int(byte)] else { return false }
            }
            count += 1
        }
        if negated { return count >= minimum }
        guard count % unit == 0 else { return false }
        let repetitions = count / unit
        return repetitions >= minimum && repetitions <= (maximum ?? .max)
    }
}

/// Reads a pattern's bytes for `SchemaPatternRun`.
private struct PatternScanner {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    var atEnd: Bool { index == bytes.count }

    func peek(at offset: Int = 0) -> UInt8? {
        index + offset < bytes.count ? bytes[index + offset] : nil
    }

    mutating func advance() {
        index += 1
    }

    mutating func take(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    /// One character of a class: a printable ASCII character other than `[`, `]`, `&` (ICU's set
    /// operations) and `\`, or `\xHH` below 0x80, or `\` before a punctuation character (itself).
    mutating func classCharacter() -> UInt8? {
        guard let byte = peek() else { return nil }
        if byte == UInt8(ascii: "\\") {
            guard let next = peek(at: 1) else { return nil }
            if next == UInt8(ascii: "x") {
                guard let high = peek(at: 2).flatMap(Hex.value(ofDigit:)),
                    let low = peek(at: 3).flatMap(Hex.value(ofDigit:))
                else { return nil }
                let code = high << 4 | low
                guard code < 128 else { return nil }
                index += 4
                return code
            }
            // `\.`, `\-` and the like; `\d`, `\s`, `\S`… are classes of their own: not read here.
            guard next < 128, !Self.isLetterOrDigit(next) else { return nil }
            index += 2
            return next
        }
        guard byte >= 0x20, byte < 0x7F, !"[]&\\".utf8.contains(byte) else { return nil }
        index += 1
        return byte
    }

    /// `{m}`, `{m,n}` or `{m,}` (no upper bound).
    mutating func bounds() -> (low: Int, high: Int?)? {
        let start = index
        guard take(UInt8(ascii: "{")), let low = number() else {
            index = start
            return nil
        }
        if take(UInt8(ascii: "}")) { return (low, low) }
        guard take(UInt8(ascii: ",")) else {
            index = start
            return nil
        }
        let high = number()
        guard take(UInt8(ascii: "}")), high.map({ $0 >= low }) ?? true else {
            index = start
            return nil
        }
        return (low, high)
    }

    private mutating func number() -> Int? {
        var value: Int?
        while let byte = peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), (value ?? 0) < 100_000 {
            value = (value ?? 0) * 10 + Int(byte - UInt8(ascii: "0"))
            index += 1
        }
        return value
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
