import Foundation

/// Which push-to-start tokens a start reaches.
public struct AudienceQuery: Sendable, Hashable {
    public var appID: AppID
    public var environment: APNSEnvironment
    public var attributesType: String
    /// Only tokens carrying this tag.
    public var tag: String?
    /// Leaves out tokens already in this event's start ledger.
    public var excludingStartsOf: EventID?
    /// Only tokens carrying at least one of these tags (no filter when empty).
    public var anyTags: [String]
    /// Only tokens of these users (no filter when empty).
    public var userIDs: [String]
    /// Only these tokens, as lower-case hex (no filter when empty).
    public var tokens: [String]
    /// Leaves out tokens that already have a final outcome (anything but `failed`) in this job: a
    /// resumed fan-out sends again only what was in flight or waiting for a retry.
    public var excludingFinalOutcomesOf: JobID?
    /// Only the tokens of this part of the audience.
    public var partition: AudiencePartition?
    /// Only tokens whose start ended uncertain (`DeliveryOutcome.uncertain`) in this job or one of
    /// its parts: the audience of a resend of that job's uncertain tokens.
    public var uncertainIn: JobID?

    public init(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        tag: String? = nil,
        excludingStartsOf: EventID? = nil,
        anyTags: [String] = [],
        userIDs: [String] = [],
        tokens: [String] = [],
        excludingFinalOutcomesOf: JobID? = nil,
        partition: AudiencePartition? = nil,
        uncertainIn: JobID? = nil
    ) {
        self.partition = partition
        self.uncertainIn = uncertainIn
        self.appID = appID
        self.environment = environment
        self.attributesType = attributesType
        self.tag = tag
        self.excludingStartsOf = excludingStartsOf
        self.anyTags = anyTags
        self.userIDs = userIDs
        self.tokens = tokens
        self.excludingFinalOutcomesOf = excludingFinalOutcomesOf
    }
}

/// Push-to-start tokens.
public protocol TokenStore: Sendable {
    /// Inserts or refreshes registrations in bulk; a refresh updates the metadata and
    /// `lastRegisteredAt` and clears an invalidation. Returns the number of registrations written.
    ///
    /// A registration naming a device ID that the app has a row for (same environment and
    /// attributes type) under another token rotates that row: it keeps its row ID and takes the
    /// new token, so its start ledger entries, activities, deliveries and reports stay the device's.
    /// When the new token has a row of its own that carries no such device ID, that row is merged
    /// into the device's in the same transaction: its ledger entries and reports move where the
    /// device's row has none for the event (the device's own are kept: they are what it was sent),
    /// its deliveries where the device's row has none in the job, its activities all, its pending
    /// starts where the device's row has none for the event and no start (their claims dropped);
    /// then it is deleted, and remembered as merged into the device's row, so that a fan-out batch
    /// that read it before and commits after writes its starts to the device's row
    /// (`commitDeliveryBatch`). A batch naming one device twice keeps its last registration. A
    /// registration without a device ID is only its token's. All or none.
    func upsertPushToStartTokens(appID: AppID, _ registrations: [PushToStartRegistration], at: Date) async throws -> Int

    /// A device's registration as the service takes it: `upsertPushToStartTokens` and then
    /// `enqueueLateJoiners` for the tokens it wrote, as one unit (all or none, late-join queueing
    /// included). `returningTokens` asks for the rows as written (a single token's answer), so no
    /// second read is needed. On PostgreSQL a batch without device rotations is one autocommit
    /// statement that finds every row it queues by what it just wrote: its plan needs no
    /// statistics, so a registration right after a bulk import costs what any other does.
    func registerPushToStartTokens(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date,
        returningTokens: Bool
    ) async throws -> TokenRegistrationOutcome

    func pushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> PushToStartToken?

    /// Unregisters the token (deletes its row, its deliveries and ledger entries); false if the app
    /// has no such token.
    func deletePushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> Bool

    /// The app's device tokens of these token rows (rows without one are left out): where the
    /// background push that wakes each device's app goes.
    func deviceTokens(appID: AppID, tokenRowIDs: [Int64]) async throws -> [Int64: String]

    /// Retires the token if `invalidation.retires(tokenLastRegisteredAt:)` holds for the row as it
    /// is at that moment (a re-registration racing the 410 wins), and, when the invalidation names
    /// its token, the row still has it (a rotated row is not retired by its old token's 410).
    /// Returns whether it was retired.
    func invalidatePushToStartToken(appID: AppID, rowID: Int64, _ invalidation: TokenInvalidation) async throws -> Bool

    /// Valid tokens of the audience with `rowID > cursor`, in `rowID` order, at most `limit`:
    /// keyset pagination, so memory and query cost do not depend on the audience's size.
    func audiencePage(_ query: AudienceQuery, after cursor: Int64, limit: Int) async throws -> [PushToStartToken]

    /// The same rows as `audiencePage`, with only what a push to each needs: what a fan-out reads.
    func audienceRecipients(_ query: AudienceQuery, after cursor: Int64, limit: Int) async throws -> [AudienceRecipient]

    /// How many tokens `audiencePage` would yield from the start, and the row IDs of the first and
    /// the last, in one read: what a fan-out is counted and split by.
    func audienceExtent(_ query: AudienceQuery) async throws -> AudienceExtent
}

extension TokenStore {
    /// The whole audience as a sequence of pages fetched one at a time.
    public func audience(_ query: AudienceQuery, after cursor: Int64 = 0, pageSize: Int = 1000) -> AudiencePages {
        AudiencePages(store: self, query: query, cursor: cursor, pageSize: pageSize)
    }
}

/// An audience read page by page by keyset pagination; holds one page at a time.
public struct AudiencePages: AsyncSequence, Sendable {
    public typealias Element = [PushToStartToken]

    let store: any TokenStore
    let query: AudienceQuery
    let cursor: Int64
    let pageSize: Int

    public struct AsyncIterator: AsyncIteratorProtocol {
        let store: any TokenStore
        let query: AudienceQuery
        var cursor: Int64
        let pageSize: Int
        var finished = false

        public mutating func next() async throws -> [PushToStartToken]? {
            guard !finished else { return nil }
            try Task.checkCancellation()
            let page = try await store.audiencePage(query, after: cursor, limit: pageSize)
            if page.count < pageSize { finished = true }
            guard let last = page.last else { return nil }
            cursor = last.rowID
            return page
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(store: store, query: query, cursor: cursor, pageSize: Swift.max(1, pageSize))
    }
}

/// One of the disjoint parts of an audience a start fan-out is split into: the tokens whose row
/// ID lies after `afterRowID` and up to `throughRowID` (either end open when `nil`). Ranges of
/// row IDs, not a modulo: a part's page is then a plain range scan of the audience index, where
/// `id % count = index` made every part walk (and skip) the whole audience.
public struct AudiencePartition: Sendable, Hashable {
    /// Rows after this one; `nil` from the first.
    public var afterRowID: Int64?
    /// Rows up to and including this one; `nil` to the last, so that the last part also reaches
    /// tokens registered after the split.
    public var throughRowID: Int64?

    public init(afterRowID: Int64?, throughRowID: Int64?) {
        self.afterRowID = afterRowID
        self.throughRowID = throughRowID
    }

    /// Whether `rowID` belongs to this part.
    public func contains(_ rowID: Int64) -> Bool {
        (afterRowID.map { rowID > $0 } ?? true) && (throughRowID.map { rowID <= $0 } ?? true)
    }

    /// `count` consecutive parts that together cover every row ID: the audience's `rowIDs` (its
    /// first and last row when it was counted) cut into ranges of near-equal width, the first
    /// open below and the last open above. Row IDs are handed out in registration order, so equal
    /// widths hold near-equal numbers of tokens.
    public static func split(rowIDs: ClosedRange<Int64>, into count: Int) -> [AudiencePartition] {
        let width = rowIDs.upperBound - rowIDs.lowerBound + 1
        let count = max(1, min(Int64(count), width))
        // The last row of part `index`; parts differ in width by at most one row. (Written so
        // that no product can overflow, whatever the row IDs.)
        func last(_ index: Int64) -> Int64 {
            rowIDs.lowerBound - 1 + width / count * (index + 1) + width % count * (index + 1) / count
        }
        return (0..<count).map { index in
            AudiencePartition(
                afterRowID: index == 0 ? nil : last(index - 1),
                throughRowID: index == count - 1 ? nil : last(index)
            )
        }
    }
}

/// How many tokens an audience has and the row IDs of its first and last (`nil` when empty).
public struct AudienceExtent: Sendable, Hashable {
    public var count: Int64
    public var rowIDs: ClosedRange<Int64>?

    public init(count: Int64, rowIDs: ClosedRange<Int64>?) {
        self.count = count
        self.rowIDs = rowIDs
    }
}
