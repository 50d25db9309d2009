import MarqueeClient

/// How a failed request reads on standard error:
///
/// ```
/// error: Invalid request: the request has invalid fields
///   /teamID: must be Apple's 10-character team ID (A–Z, 0–9)
///   request id: 5b0c…
/// ```
///
/// The API key is never part of it; for 401s it says where the key came from instead.
struct ErrorReport: Sendable {
    var error: MarqueeClientError
    var connection: Connection?
    var notes: [String] = []

    var text: String {
        var lines = ["error: \(error.description)"]
        for field in error.fieldErrors {
            lines.append("  \(field.pointer.isEmpty ? "(request)" : field.pointer): \(field.detail)")
        }
        if let apnsReason = error.apnsReason { lines.append("  APNs reason: \(apnsReason)") }
        if let type = error.problemType { lines.append("  problem: \(type) (HTTP \(error.status ?? 0))") }
        if let requestID = error.requestID { lines.append("  request id: \(requestID)") }
        lines += notes.map { "  \($0)" }
        if error.status == 401, let source = connection?.apiKeySource {
            lines.append("  hint: the API key came from \(source); check that it is the whole key and not revoked")
        }
        if error.kind == .unreachable, let connection {
            lines.append(
                "  hint: the server URL came from \(connection.serverSource); is `marquee serve` running there?"
            )
        }
        return lines.joined(separator: "\n")
    }
}
