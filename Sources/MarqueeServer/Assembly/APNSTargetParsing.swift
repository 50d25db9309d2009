import Foundation
import MarqueeAPNS
import MarqueeCore
import MarqueeEngine

/// Reads the `custom` APNs target's endpoint URLs.
enum APNSTargetParsing {
    static func custom(endpoints: [String: String], caFile: String?) throws -> APNSTarget {
        var push: [APNSEnvironment: APNSEndpoint] = [:]
        var management: [APNSEnvironment: APNSEndpoint] = [:]
        for environment in APNSEnvironment.allCases {
            let pushKey = "apns.\(environment.rawValue).pushURL"
            let managementKey = "apns.\(environment.rawValue).managementURL"
            push[environment] = try endpoint(endpoints[pushKey] ?? "", key: pushKey, caFile: caFile)
            management[environment] = try endpoint(endpoints[managementKey] ?? "", key: managementKey, caFile: caFile)
        }
        return APNSTarget(pushEndpoints: push, channelManagementEndpoints: management)
    }

    static func endpoint(_ text: String, key: String, caFile: String?) throws -> APNSEndpoint {
        guard let url = URL(string: text), let scheme = url.scheme, let host = url.host, let port = url.port else {
            throw ConfigurationError(key: key, "'\(text)' must be https://host:port (TLS) or http://host:port (h2c)")
        }
        switch scheme {
        case "https":
            return APNSEndpoint(
                host: host,
                port: port,
                security: .tls(trustRoots: caFile.map { .pemFile($0) } ?? .system)
            )
        case "http":
            return APNSEndpoint(host: host, port: port, security: .cleartext)
        default:
            throw ConfigurationError(key: key, "the scheme must be https or http, not \(scheme)")
        }
    }
}
