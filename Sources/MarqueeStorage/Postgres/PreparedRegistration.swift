import Foundation
import MarqueeCore
import PostgresNIO

/// `PostgresStore.registration` as a prepared statement: each pooled connection parses and
/// analyzes it once and keeps its plan, instead of every registration paying for it (planning the
/// statement's five CTEs cost PostgreSQL more than running them: 55 % of the machine's CPU went
/// to parse, rewrite and plan in a profile of single-token registrations). Its text is the same
/// for every call (options and values are parameters), so one name serves them all. The plan kept
/// is the generic one (`PostgresStore.sessionParameters`): PostgreSQL's own choice re-planned it
/// for every call, as a plan for the given values always looked cheaper.
struct PreparedRegistration: PostgresPreparedStatement {
    typealias Row = PostgresRow

    static let name = "marquee_register_push_to_start_tokens"
    static let sql = PostgresStore.registration(
        appID: AppID(),
        [],
        at: Date(timeIntervalSince1970: 0),
        options: [],
        returningTokens: false
    ).sql

    /// The statement's values, in the order of `sql`'s placeholders.
    let bindings: PostgresBindings

    init(_ query: PostgresQuery) {
        bindings = query.binds
    }

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}
