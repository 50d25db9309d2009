/// What MarqueeKit remembers across launches: what it reported and which registrations Marquee has.
public struct MarqueeKitState: Sendable, Equatable, Codable {
    public var census: ActivityCensus
    public var ledger: TokenLedger

    public init(census: ActivityCensus = ActivityCensus(), ledger: TokenLedger = TokenLedger()) {
        self.census = census
        self.ledger = ledger
    }
}
