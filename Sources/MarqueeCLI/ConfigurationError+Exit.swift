import ArgumentParser
import Foundation
import MarqueeServer

extension ConfigurationError {
    /// The value `read` gives; a configuration it refuses is printed (`marquee: configuration key
    /// …`) and the command exits 2, as `serve` and `emulator` both do.
    static func exitingOnRefusal<Value>(_ read: () async throws -> Value) async throws -> Value {
        do {
            return try await read()
        } catch let error as ConfigurationError {
            FileHandle.standardError.write(Data("marquee: \(error)\n".utf8))
            throw ExitCode(2)
        }
    }
}
