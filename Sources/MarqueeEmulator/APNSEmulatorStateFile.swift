import Foundation
import MarqueeCore

/// `emulator.json`: how to reach a running emulator, for scripts, demos and other processes.
///
/// ```json
/// {
///   "environments": {"sandbox": {"push": "https://127.0.0.1:52011", "channelManagement": "...",
///                                "pushH2C": "http://127.0.0.1:52013", "channelManagementH2C": "..."}, ...},
///   "caCertificatePath": "/state/ca.pem",
///   "inspectionURL": "http://127.0.0.1:52019",
///   "demoKey": {"teamID": "EMUTEAM001", "keyID": "...", "bundleID": "com.example.marquee", "p8Path":
/// "/state/AuthKey_....p8"}
/// }
/// ```
public struct APNSEmulatorStateFile: Sendable, Codable, Hashable {
    /// The base URLs of one environment's listeners; `nil` where a transport is off.
    public struct Endpoints: Sendable, Codable, Hashable {
        public var push: String?
        public var channelManagement: String?
        public var pushH2C: String?
        public var channelManagementH2C: String?
    }

    /// A key the emulator accepts; the private key is in the `.p8` file at `p8Path` (mode 0600).
    public struct DemoKey: Sendable, Codable, Hashable {
        public var teamID: String
        public var keyID: String
        public var bundleID: String
        public var p8Path: String
    }

    public var environments: [String: Endpoints]
    public var caCertificatePath: String?
    public var inspectionURL: String?
    public var demoKey: DemoKey?

    public static let fileName = "emulator.json"

    /// Describes a running emulator.
    public init(emulator: APNSEmulator, demoKey: DemoKey?) {
        var environments: [String: Endpoints] = [:]
        for environment in emulator.configuration.environments {
            environments[environment.rawValue] = Endpoints(
                push: emulator.pushURL(environment, transport: .tls),
                channelManagement: emulator.channelManagementURL(environment, transport: .tls),
                pushH2C: emulator.pushURL(environment, transport: .h2c),
                channelManagementH2C: emulator.channelManagementURL(environment, transport: .h2c)
            )
        }
        self.environments = environments
        self.caCertificatePath = emulator.caCertificatePath
        self.inspectionURL = emulator.inspectionURL
        self.demoKey = demoKey
    }

    /// Writes the demo key's `.p8` (owner read/write only) and `emulator.json` into `directory`,
    /// creating it if needed, and returns the description written.
    @discardableResult
    public static func write(
        emulator: APNSEmulator,
        demoKey: APNSEmulatorDemoKey?,
        to directory: URL
    ) throws -> APNSEmulatorStateFile {
        let manager = FileManager.default
        try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        var keyDescription: DemoKey?
        if let demoKey {
            let p8 = directory.appendingPathComponent("AuthKey_\(demoKey.keyID).p8")
            // Created empty with 0600 first, so the secret never sits in a world-readable file.
            guard manager.createFile(atPath: p8.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: p8.path])
            }
            try manager.setAttributes([.posixPermissions: 0o600], ofItemAtPath: p8.path)
            let handle = try FileHandle(forWritingTo: p8)
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(demoKey.p8PEM.utf8))
            try handle.close()
            keyDescription = DemoKey(
                teamID: demoKey.teamID,
                keyID: demoKey.keyID,
                bundleID: demoKey.bundleID,
                p8Path: p8.path
            )
        }
        let description = APNSEmulatorStateFile(emulator: emulator, demoKey: keyDescription)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(description).write(to: directory.appendingPathComponent(fileName), options: .atomic)
        return description
    }
}
