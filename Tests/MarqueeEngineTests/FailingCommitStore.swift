import Foundation
import MarqueeCore
import Synchronization

/// The store a fan-out runs on, failing the commits of its outcome batches as a test says (the
/// Nth one, for how many tries): a store that drops its connection mid-run. Everything else goes
/// to the real store unchanged.
final class FailingCommitStore: AppStore, DeliveryStore, TokenStore, JobStore {
    /// A store outage that a retry may get through, as a dropped connection is.
    struct ConnectionDropped: Error {}

    private struct State {
        var commits = 0
        var failures = 0
        var renewalsFail = false
        var renewalsFailed = 0
        var reservations = 0
    }

    let base: any AppStore & DeliveryStore & TokenStore & JobStore
    /// Which commit (counted from 1) fails first.
    let failingCommit: Int
    /// How many tries fail from that one on.
    let failures: Int
    /// What they throw.
    let error: any Error
    /// Which reservation of tokens (counted from 1) fails, once; `nil`: none.
    let failingReservation: Int?
    private let state = Mutex(State())

    init(
        _ base: any AppStore & DeliveryStore & TokenStore & JobStore,
        failingCommit: Int,
        failures: Int = 1,
        error: any Error = ConnectionDropped(),
        failingReservation: Int? = nil
    ) {
        self.base = base
        self.failingCommit = failingCommit
        self.failures = failures
        self.error = error
        self.failingReservation = failingReservation
    }

    /// A store that refuses the `commit`th commit for good (an error no retry gets through), as
    /// one that finds the batch's row corrupt would.
    static func refusing(
        commit: Int,
        of base: any AppStore & DeliveryStore & TokenStore & JobStore
    ) -> FailingCommitStore {
        FailingCommitStore(
            base,
            failingCommit: commit,
            error: StoreError.corruptRow(entity: "delivery", detail: "the test's store refuses commit \(commit)")
        )
    }

    /// Commits tried so far, failed ones included.
    var commitsTried: Int { state.withLock { $0.commits } }
    /// Commits that failed.
    var commitsFailed: Int { state.withLock { $0.failures } }
    /// Lease renewals that failed (`failRenewals`).
    var renewalsFailed: Int { state.withLock { $0.renewalsFailed } }

    /// From now on every lease renewal fails, as one does while the database restarts.
    func failRenewals() {
        state.withLock { $0.renewalsFail = true }
    }

    func commitDeliveryBatch(_ batch: DeliveryBatch, at: Date) async throws {
        let fails = state.withLock { state in
            state.commits += 1
            let fails = state.commits >= failingCommit && state.failures < failures
            if fails { state.failures += 1 }
            return fails
        }
        if fails { throw error }
        try await base.commitDeliveryBatch(batch, at: at)
    }

    // MARK: Passed through

    func deliveries(appID: AppID, jobID: JobID) async throws -> [Delivery] {
        try await base.deliveries(appID: appID, jobID: jobID)
    }
    func deliveryCounts(appID: AppID, jobIDs: [JobID]) async throws -> [DeliveryCount] {
        try await base.deliveryCounts(appID: appID, jobIDs: jobIDs)
    }
    func startRecords(appID: AppID, eventID: EventID, among tokenRowIDs: [Int64]) async throws -> [StartRecord] {
        try await base.startRecords(appID: appID, eventID: eventID, among: tokenRowIDs)
    }

    func createApp(_ app: App) async throws { try await base.createApp(app) }
    func app(_ id: AppID) async throws -> App? { try await base.app(id) }
    func apps() async throws -> [App] { try await base.apps() }
    func updateApp(_ app: App) async throws -> App { try await base.updateApp(app) }
    func storeSigningKey(_ key: SigningKey, privateKeyPEM: String) async throws {
        try await base.storeSigningKey(key, privateKeyPEM: privateKeyPEM)
    }
    func signingKeys(appID: AppID) async throws -> [SigningKey] { try await base.signingKeys(appID: appID) }
    func signingKeyPEM(appID: AppID, id: SigningKeyID) async throws -> String? {
        try await base.signingKeyPEM(appID: appID, id: id)
    }
    func resealSigningKeys() async throws -> Int { try await base.resealSigningKeys() }
    func createAPIKey(_ key: APIKey) async throws { try await base.createAPIKey(key) }
    func apiKey(prefix: String) async throws -> APIKey? { try await base.apiKey(prefix: prefix) }
    func apiKeys(appID: AppID?) async throws -> [APIKey] { try await base.apiKeys(appID: appID) }
    func revokeAPIKey(appID: AppID?, id: APIKeyID, at: Date) async throws -> Bool {
        try await base.revokeAPIKey(appID: appID, id: id, at: at)
    }
    func hasAnyAPIKey() async throws -> Bool { try await base.hasAnyAPIKey() }

    func upsertPushToStartTokens(appID: AppID, _ registrations: [PushToStartRegistration], at: Date) async throws -> Int
    {
        try await base.upsertPushToStartTokens(appID: appID, registrations, at: at)
    }
    func registerPushToStartTokens(
        appID: AppID,
        _ registrations: [PushToStartRegistration],
        at: Date,
        returningTokens: Bool
    ) async throws -> TokenRegistrationOutcome {
        try await base.registerPushToStartTokens(
            appID: appID,
            registrations,
            at: at,
            returningTokens: returningTokens
        )
    }
    func pushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> PushToStartToken? {
        try await base.pushToStartToken(
            appID: appID,
            environment: environment,
            attributesType: attributesType,
            token: token
        )
    }
    func deletePushToStartToken(
        appID: AppID,
        environment: APNSEnvironment,
        attributesType: String,
        token: String
    ) async throws -> Bool {
        try await base.deletePushToStartToken(
            appID: appID,
            environment: environment,
            attributesType: attributesType,
            token: token
        )
    }
    func deviceTokens(appID: AppID, tokenRowIDs: [Int64]) async throws -> [Int64: String] {
        try await base.deviceTokens(appID: appID, tokenRowIDs: tokenRowIDs)
    }
    func invalidatePushToStartToken(appID: AppID, rowID: Int64, _ invalidation: TokenInvalidation) async throws -> Bool
    {
        try await base.invalidatePushToStartToken(appID: appID, rowID: rowID, invalidation)
    }
    func audiencePage(_ query: AudienceQuery, after cursor: Int64, limit: Int) async throws -> [PushToStartToken] {
        try await base.audiencePage(query, after: cursor, limit: limit)
    }
    func audienceRecipients(_ query: AudienceQuery, after cursor: Int64, limit: Int) async throws -> [AudienceRecipient]
    {
        try await base.audienceRecipients(query, after: cursor, limit: limit)
    }
    func audienceExtent(_ query: AudienceQuery) async throws -> AudienceExtent { try await base.audienceExtent(query) }

    func enqueueJob(_ job: Job) async throws { try await base.enqueueJob(job) }
    func enqueueJobs(_ jobs: [Job]) async throws { try await base.enqueueJobs(jobs) }
    func childJobs(appID: AppID, parentID: JobID) async throws -> [Job] {
        try await base.childJobs(appID: appID, parentID: parentID)
    }
    func finishParentJob(id: JobID, at: Date) async throws -> JobState? {
        try await base.finishParentJob(id: id, at: at)
    }
    func job(appID: AppID, id: JobID) async throws -> Job? { try await base.job(appID: appID, id: id) }
    func leaseJobs(
        owner: String,
        kinds: Set<JobKind>?,
        now: Date,
        leaseDuration: Duration,
        limit: Int
    ) async throws -> [Job] {
        try await base.leaseJobs(owner: owner, kinds: kinds, now: now, leaseDuration: leaseDuration, limit: limit)
    }
    func renewJobLease(id: JobID, owner: String, now: Date, leaseDuration: Duration) async throws -> Bool {
        let fails = state.withLock { state in
            if state.renewalsFail { state.renewalsFailed += 1 }
            return state.renewalsFail
        }
        if fails { throw ConnectionDropped() }
        return try await base.renewJobLease(id: id, owner: owner, now: now, leaseDuration: leaseDuration)
    }
    func reserveJobTokens(id: JobID, owner: String, through tokenRowID: Int64?, at: Date) async throws {
        let fails = state.withLock { state in
            state.reservations += 1
            return state.reservations == failingReservation
        }
        if fails { throw ConnectionDropped() }
        try await base.reserveJobTokens(id: id, owner: owner, through: tokenRowID, at: at)
    }
    func completeJob(id: JobID, owner: String, at: Date) async throws {
        try await base.completeJob(id: id, owner: owner, at: at)
    }
    func failJob(id: JobID, owner: String, error: String, retryAt: Date?, at: Date) async throws {
        try await base.failJob(id: id, owner: owner, error: error, retryAt: retryAt, at: at)
    }
    func jobs(appID: AppID, kinds: Set<JobKind>?, before: JobListPosition?, limit: Int) async throws -> [Job] {
        try await base.jobs(appID: appID, kinds: kinds, before: before, limit: limit)
    }
    func cancelJob(appID: AppID, id: JobID, at: Date) async throws -> Bool {
        try await base.cancelJob(appID: appID, id: id, at: at)
    }
}
