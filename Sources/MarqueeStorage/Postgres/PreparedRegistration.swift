import Foundation
import MarqueeCore
import PostgresNIO

/// `PostgresStore.registration` as a prepared statement: planning the statement's five CTEs cost
/// PostgreSQL more than running them (55 % of the machine's CPU went to parse, rewrite and plan in
/// a profile of single-token registrations). Its text is the same for every call (options and
/// values are parameters), so one name serves them all. PostgreSQL keeps its generic plan after a
/// connection's first five calls, which the statement's limit to the call's own count makes no
/// dearer than a plan for any values (`PostgresStore.registration`, `PreparedQueryShape`).
enum RegistrationShape: PreparedQueryShape {
    static let name = "marquee_register_push_to_start_tokens"
    static let sql = PostgresStore.registration(
        appID: AppID(),
        [],
        at: Date(timeIntervalSince1970: 0),
        options: [],
        returningTokens: false
    ).sql
}

typealias PreparedRegistration = PreparedQuery<RegistrationShape>
