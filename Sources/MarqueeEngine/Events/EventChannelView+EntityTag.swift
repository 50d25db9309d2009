import Crypto
import Foundation
import MarqueeCore

extension EventChannelView {
    /// A strong validator of what the channel-ID read answers: it changes whenever anything the
    /// answer says changes: a replaced channel, its state, or when the event's timeline will delete it.
    static func entityTag(channel: BroadcastChannel, expiresAt: Date?) -> String {
        let expiry = expiresAt.map { String(Int64($0.timeIntervalSince1970)) } ?? "-"
        let material = [
            channel.id.description, channel.apnsChannelID ?? "", channel.state.rawValue,
            String(channel.storagePolicy.rawValue), expiry,
        ].joined(separator: "|")
        return "\"\(Hex.encode(SHA256.hash(data: Data(material.utf8)).prefix(12)))\""
    }

    /// Whether an `If-None-Match` header names this answer (or any, `*`): a list of entity tags,
    /// compared as they are (strong comparison of Marquee's own tags).
    public func isMatched(byIfNoneMatch header: String) -> Bool {
        // A client sends back the one tag it was given: that compares without splitting.
        if header == entityTag { return true }
        return header.split(separator: ",").contains {
            let candidate = $0.trimmingCharacters(in: .whitespaces)
            return candidate == entityTag || candidate == "*"
        }
    }
}
