import Foundation

/// A `/metrics` answer read as Prometheus reads it: one sample per line, `name{label="value",…} number`.
public struct MetricsScrape: Sendable {
    public struct Sample: Sendable, Hashable {
        public var name: String
        public var labels: [String: String]
        public var value: Double
    }

    public let text: String
    public let samples: [Sample]

    public init(_ text: String) {
        self.text = text
        samples = text.split(separator: "\n").compactMap(Self.sample)
    }

    /// The value of the one series with `name` and exactly `labels`; `nil` when there is none.
    public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    /// Every series of `name` whose labels include `labels`.
    public func series(_ name: String, matching labels: [String: String] = [:]) -> [Sample] {
        samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
    }

    /// The answer without its sample values: every name, label and comment, which is where a path,
    /// an ID or a secret could leak. Searching the whole text for a fragment made of digits also
    /// finds it inside a number by chance (`4711` in a duration sum of `0.005447114`, in a loaded run).
    public var textWithoutValues: String {
        text.split(separator: "\n").map { line in
            guard Self.sample(line) != nil, let space = line.lastIndex(of: " ") else { return line }
            return line[..<space]
        }.joined(separator: "\n")
    }

    /// Whether a `# TYPE` line declares `name` as `type`.
    public func declares(_ name: String, as type: String) -> Bool {
        text.split(separator: "\n").contains { $0 == "# TYPE \(name) \(type)" }
    }

    private static func sample(_ line: Substring) -> Sample? {
        guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
            let value = Double(line[line.index(after: space)...])
        else {
            return nil
        }
        let series = line[..<space]
        guard let brace = series.firstIndex(of: "{") else {
            return Sample(name: String(series), labels: [:], value: value)
        }
        var labels: [String: String] = [:]
        // Label values written by swift-prometheus have no escaped quotes in these tests.
        let body = series[series.index(after: brace)..<(series.lastIndex(of: "}") ?? series.endIndex)]
        for pair in body.split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2 else { continue }
            labels[String(parts[0])] = String(parts[1].dropFirst().dropLast())
        }
        return Sample(name: String(series[..<brace]), labels: labels, value: value)
    }
}

extension TestServer {
    /// `GET /metrics`, read.
    public func scrapeMetrics(headers: [String: String] = [:]) async throws -> MetricsScrape {
        let response = try await client.send("GET", "/metrics", headers: headers)
        guard response.status == 200 else {
            throw TestSetupError("/metrics answered \(response.status): \(response.text)")
        }
        return MetricsScrape(response.text)
    }
}
