import MarqueeCore

/// Something the app on a virtual device notices, handed from the world (under its lock) to the
/// app model (on its own tasks): the model decides and reports later, off the event loop.
struct AppModelEvent: Sendable {
    enum Kind: Sendable {
        /// A start reached one of the device's push-to-start tokens (shown or not: with Live
        /// Activities off nothing shows, and the app still learns of the event when it runs).
        case started(payload: [UInt8])
        /// An update reached one of its activities (an end among them).
        case updated
        /// A push reached the app's device token: Marquee's background push, or someone else's.
        case deviceTokenPush(payload: [UInt8])
        /// The user opened the app, which knows these events are live.
        case launched(liveEvents: [String])
    }

    var environment: APNSEnvironment
    var deviceID: String
    var kind: Kind
}
