/// Where `MarqueeKitState` is kept between launches.
public protocol MarqueeKitStateStore: Sendable {
    /// The state saved last; nil when there is none yet.
    func load() throws -> MarqueeKitState?
    func save(_ state: MarqueeKitState) throws
}
