/// A value of a JSON Lines row, as far as token rows care: JSONSerialization's `Any` would blur
/// booleans and numbers on Linux, a decoder does not.
enum JSONRowValue: Decodable, Sendable {
    case null
    case bool(Bool)
    case string(String)
    case strings([String])
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String].self) {
            self = .strings(value)
        } else {
            self = .other
        }
    }
}
