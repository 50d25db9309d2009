import Foundation

/// A one-line progress display on a terminal's standard error, redrawn in place at most ten
/// times a second. Lines printed meanwhile go through `printAbove`, so that the bar never
/// interleaves with them.
struct ProgressBar {
    let output: TextOutput
    /// False when standard error is not a terminal: then nothing is drawn at all.
    let enabled: Bool
    private var lastDrawn: ContinuousClock.Instant?
    private var visible = false

    init(output: TextOutput, enabled: Bool) {
        self.output = output
        self.enabled = enabled
    }

    /// Draws `text` unless the last draw was under 100 ms ago (`force` draws anyway).
    mutating func draw(_ text: String, force: Bool = false) {
        guard enabled else { return }
        let now = ContinuousClock.now
        if !force, let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
        lastDrawn = now
        visible = true
        output.write("\r\u{1B}[2K" + text)
    }

    /// Prints a line on standard error above the bar.
    mutating func printAbove(_ line: String) {
        clear()
        output.write(line + "\n")
    }

    /// Draws `text` one last time and leaves it on the terminal, the cursor on the next line.
    mutating func finish(_ text: String) {
        guard enabled else { return }
        draw(text, force: true)
        output.write("\n")
        visible = false
    }

    /// Removes the bar, leaving the cursor at the start of an empty line.
    mutating func clear() {
        guard enabled, visible else { return }
        output.write("\r\u{1B}[2K")
        visible = false
        lastDrawn = nil
    }

    /// `[#########-----------]  45%` for a fraction in 0...1.
    static func bar(_ fraction: Double, width: Int = 24) -> String {
        let clamped = min(max(fraction.isFinite ? fraction : 0, 0), 1)
        let filled = Int((clamped * Double(width)).rounded(.down))
        let percent = Int((clamped * 100).rounded(.down))
        let digits = String(percent)
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + String(repeating: " ", count: 3 - digits.count) + digits + "%"
    }
}
