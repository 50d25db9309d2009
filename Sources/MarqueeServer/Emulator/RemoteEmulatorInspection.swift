import Foundation
import MarqueeCore
import MarqueeEmulator
import MarqueeKit

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An APNs emulator in another process (`marquee emulator`, the Compose file's), through its
/// inspection API at `emulator.inspectionURL`: the same JSON the in-process emulator's snapshots
/// encode to. Its failures are 503 `apns-unavailable` problems: the emulator (APNs here), not the request, is at fault.
struct RemoteEmulatorInspection: EmulatorInspection {
    let baseURL: URL

    func devices(in environment: APNSEnvironment) async throws -> [EmulatedDevice] {
        try await call("GET", "v1/\(environment.rawValue)/devices")
    }

    func activities(in environment: APNSEnvironment) async throws -> [EmulatedActivity] {
        try await call("GET", "v1/\(environment.rawValue)/activities")
    }

    func registerDevice(
        environment: APNSEnvironment,
        bundleID: String,
        iOSVersion: IOSVersion,
        pushToStartAttributesTypes: [String]
    ) async throws -> EmulatedDevice {
        let body: JSONValue = [
            "bundleID": .string(bundleID),
            "iOSVersion": .string(iOSVersion.description),
            "pushToStartAttributesTypes": .array(pushToStartAttributesTypes.map(JSONValue.string)),
        ]
        return try await call("POST", "v1/\(environment.rawValue)/devices", body: Data(body.jsonBytes))
    }

    private static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    private func call<Answer: Decodable>(_ method: String, _ path: String, body: Data? = nil) async throws -> Answer {
        var request = URLRequest(url: baseURL.appendingPathComponent(path), timeoutInterval: 10)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await URLSession.shared.cancellableData(for: request)
        } catch {
            throw Problem(
                .apnsUnavailable,
                detail: "the APNs emulator at emulator.inspectionURL did not answer: \(error.localizedDescription)"
            )
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            let message = String(decoding: data.prefix(300), as: UTF8.self)
            throw Problem(
                .apnsUnavailable,
                detail: "the APNs emulator at emulator.inspectionURL answered \(status): \(message)"
            )
        }
        do {
            return try Self.decoder.decode(Answer.self, from: data)
        } catch {
            throw Problem(
                .apnsUnavailable,
                detail: "the APNs emulator at emulator.inspectionURL answered what is not its inspection JSON"
            )
        }
    }
}
