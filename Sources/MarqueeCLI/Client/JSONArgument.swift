import Foundation
import OpenAPIRuntime

/// A JSON object given on the command line as text (`'{"homeScore":1}'`) or as `@file` (`@-` for
/// standard input), as curl takes request bodies.
enum JSONArgument {
    static func object(_ argument: String, option: String) throws(CLIFailure) -> OpenAPIObjectContainer {
        let data = try read(argument, option: option)
        do {
            return try JSONDecoder().decode(OpenAPIObjectContainer.self, from: data)
        } catch {
            throw .usage("\(option): expected a JSON object, as text or @file (\(Self.reason(error)))")
        }
    }

    /// A JSON object made of values the command has (an alert's title and body, a content-state).
    static func object(
        _ fields: [String: (any Sendable)?],
        describing what: String
    ) throws(CLIFailure) -> OpenAPIObjectContainer {
        do {
            return try OpenAPIObjectContainer(unvalidatedValue: fields)
        } catch {
            throw .usage("cannot make the \(what): \(error)")
        }
    }

    static func read(_ argument: String, option: String) throws(CLIFailure) -> Data {
        guard argument.hasPrefix("@") else { return Data(argument.utf8) }
        let path = String(argument.dropFirst())
        if path == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .usage("\(option): cannot read \(path): \(error.localizedDescription)")
        }
    }

    private static func reason(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error {
            return (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String
                ?? context.debugDescription
        }
        if case DecodingError.typeMismatch(_, let context) = error { return context.debugDescription }
        return "\(error)"
    }
}
