import Foundation

/// Somewhere text goes: a file descriptor of the process, or a buffer a test reads.
struct TextOutput: Sendable {
    let write: @Sendable (String) -> Void

    init(write: @escaping @Sendable (String) -> Void) {
        self.write = write
    }

    func write(_ text: String) {
        write(text)
    }

    // Written unbuffered: a progress bar on stderr and a table on stdout must not wait for each
    // other, and nothing may be lost if the process exits right after.
    static let standardOutput = TextOutput { FileHandle.standardOutput.write(Data($0.utf8)) }
    static let standardError = TextOutput { FileHandle.standardError.write(Data($0.utf8)) }
}
