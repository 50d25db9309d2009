/// An RFC 9457 problem document as Marquee sends it (`application/problem+json`).
public struct MarqueeProblem: Sendable, Equatable, Codable {
    /// A stable relative URI per kind of error (`/problems/not-found`).
    public var type: String
    public var title: String
    public var status: Int
    /// What went wrong, for a person to act on.
    public var detail: String?
    /// The request ID: quote it to the operator.
    public var instance: String?
    /// For invalid input, each field that is wrong.
    public var errors: [FieldError]?

    public struct FieldError: Sendable, Equatable, Codable {
        /// A JSON Pointer to the body's field (`/environment`).
        public var pointer: String?
        /// A parameter's name, for a parameter.
        public var name: String?
        public var detail: String

        public init(pointer: String? = nil, name: String? = nil, detail: String) {
            self.pointer = pointer
            self.name = name
            self.detail = detail
        }
    }

    public init(
        type: String,
        title: String,
        status: Int,
        detail: String? = nil,
        instance: String? = nil,
        errors: [FieldError]? = nil
    ) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.instance = instance
        self.errors = errors
    }
}
