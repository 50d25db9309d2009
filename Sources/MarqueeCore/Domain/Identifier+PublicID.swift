import Foundation

/// An entity whose IDs the API shows with a type prefix (`job_…`).
public protocol PubliclyIdentified {
    /// The prefix before the underscore: `app`, `key`, `chn`, `evt`, `job`, `sch`.
    static var publicIDPrefix: String { get }
}

extension Identifier where Entity: PubliclyIdentified {
    /// The ID as the API, the command line and the log show it: the prefix, `_`, and the UUID's 32
    /// lower-case hex digits (`job_db21e0ef436f…`), so that searching the log for the ID an answer
    /// gave finds its lines.
    public var publicID: String {
        "\(Entity.publicIDPrefix)_\(Hex.encode(withUnsafeBytes(of: uuid.uuid) { Array($0) }))"
    }

    /// Parses the form `publicID` writes; `nil` for anything else (another prefix included).
    public init?(publicID text: some StringProtocol) {
        let prefix = Entity.publicIDPrefix + "_"
        guard text.hasPrefix(prefix), let bytes = Hex.decode(text.dropFirst(prefix.count)), bytes.count == 16 else {
            return nil
        }
        self.init(bytes.withUnsafeBytes { raw in UUID(uuid: raw.loadUnaligned(as: uuid_t.self)) })
    }
}

extension App: PubliclyIdentified { public static var publicIDPrefix: String { "app" } }
extension APIKey: PubliclyIdentified { public static var publicIDPrefix: String { "key" } }
extension BroadcastChannel: PubliclyIdentified { public static var publicIDPrefix: String { "chn" } }
extension Event: PubliclyIdentified { public static var publicIDPrefix: String { "evt" } }
extension Job: PubliclyIdentified { public static var publicIDPrefix: String { "job" } }
extension Schedule: PubliclyIdentified { public static var publicIDPrefix: String { "sch" } }
