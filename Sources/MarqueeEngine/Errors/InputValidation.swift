import Foundation

/// Collects every field error of an input before refusing it, so that one answer names them all.
struct InputValidation {
    private(set) var errors: [FieldError] = []

    /// The pointer and detail are made only for a condition that fails: a batch's thousand items
    /// are checked field by field.
    mutating func require(
        _ condition: Bool,
        _ pointer: @autoclosure () -> String,
        _ detail: @autoclosure () -> String
    ) {
        if !condition { errors.append(FieldError(pointer(), detail())) }
    }

    mutating func add(_ error: FieldError) {
        errors.append(error)
    }

    /// Checks a free-text field's length in characters, counted as JSON Schema's `maxLength`
    /// counts them (Unicode code points), and that it is not blank, as the document's `\S`
    /// pattern says.
    mutating func text(_ value: String, _ pointer: String, maximum: Int, allowEmpty: Bool = false) {
        let length = value.unicodeScalars.count
        if !allowEmpty && value.unicodeScalars.allSatisfy(\.properties.isWhitespace) {
            errors.append(FieldError(pointer, "must not be blank"))
        } else if length > maximum {
            errors.append(FieldError(pointer, "must be at most \(maximum) characters (got \(length))"))
        }
    }

    /// Throws `EngineError.invalidInput` if any check failed.
    func check() throws(EngineError) {
        if !errors.isEmpty { throw .invalidInput(errors) }
    }
}
