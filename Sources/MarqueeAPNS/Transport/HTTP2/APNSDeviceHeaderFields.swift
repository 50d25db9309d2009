import NIOHPACK

/// A device push's header fields in the form `APNSHTTP2Framer` encodes them: the two unique to the
/// push (`:path`, which holds the token, and `apns-id`) apart from the rest, which are the same for
/// every push of a fan-out on a connection. Once the connection's HPACK table holds the repeating
/// ones, their encoding is a run of one-byte table references that the framer writes again as it
/// is (`APNSHPACKRepeatCache`) instead of looking each field up, and the unique ones go as literals
/// that are never indexed, without Huffman coding: a fan-out's per-push header work is then two
/// copies, on the server's side too.
struct APNSDeviceHeaderFields: Sendable, Equatable {
    /// The fields every push of one fan-out shares on a connection, all indexable.
    struct Repeating: Sendable, Equatable {
        var scheme: String
        var authority: String
        var authorization: String
        var pushType: String
        var topic: String
        var priority: String
        var expiration: String?
        var collapseID: String?

        /// In the order they are written: pseudo-header fields first (RFC 9113 §8.3; `:path`, which
        /// the framer writes before these, is one too).
        var headers: HPACKHeaders {
            var headers = HPACKHeaders()
            headers.reserveCapacity(10)
            headers.add(name: ":method", value: "POST")
            headers.add(name: ":scheme", value: scheme)
            headers.add(name: ":authority", value: authority)
            headers.add(name: "authorization", value: authorization)
            headers.add(name: "apns-push-type", value: pushType)
            headers.add(name: "apns-topic", value: topic)
            headers.add(name: "apns-priority", value: priority)
            if let expiration { headers.add(name: "apns-expiration", value: expiration) }
            // A fan-out's starts share their event's collapse ID: after the first request on a
            // connection it costs a byte or two rather than its 46.
            if let collapseID { headers.add(name: "apns-collapse-id", value: collapseID) }
            headers.add(name: "content-type", value: "application/json")
            return headers
        }
    }

    /// `/3/device/<token>`.
    var path: String
    var repeating: Repeating
    /// `apns-id`, when the client chose it.
    var apnsID: String?

    /// The whole block as headers, in the order the framer writes them.
    var headers: HPACKHeaders {
        var headers = HPACKHeaders()
        headers.add(name: ":path", value: path, indexing: .nonIndexable)
        headers.add(contentsOf: repeating.headers)
        if let apnsID { headers.add(name: "apns-id", value: apnsID, indexing: .nonIndexable) }
        return headers
    }
}
