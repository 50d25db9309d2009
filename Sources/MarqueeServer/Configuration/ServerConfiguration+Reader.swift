import Configuration
import Foundation
import MarqueeAPNS

extension ServerConfiguration {
    /// `emulator.inspectionURL`: where `/v1/emulator` reads a separate emulator's devices.
    static func emulatorInspectionURL(_ reader: ConfigReader) throws(ConfigurationError) -> URL? {
        guard let text = reader.raw("emulator.inspectionURL") else { return nil }
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https", url.host != nil else {
            throw ConfigurationError(
                key: "emulator.inspectionURL",
                "must be an http:// URL of an emulator's inspection API"
            )
        }
        return url
    }

    /// `apns.*`: the APNs client's connections and streams.
    static func apnsTransport(_ reader: ConfigReader) throws(ConfigurationError) -> APNSClientConfiguration.Transport {
        APNSClientConfiguration.Transport(
            connectionsPerEndpoint: try reader.integer("apns.connections", default: 2, range: 1...64),
            maximumStreamsPerConnection: try reader.integer(
                "apns.streamsPerConnection",
                default: 1_000,
                range: 1...1_000
            ),
            adaptiveConcurrency: try reader.flag("apns.adaptiveConcurrency", default: true),
            concurrencyFloor: try reader.integer("apns.concurrencyFloor", default: 20, range: 1...1_000),
            minimumWriteBatch: try reader.integer("apns.minimumWriteBatch", default: 8, range: 1...1_000)
        )
    }
}
