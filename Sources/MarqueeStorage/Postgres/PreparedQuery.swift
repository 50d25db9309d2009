import Logging
import PostgresNIO

/// A statement whose text is the same on every call, its values all parameters: each pooled
/// connection parses and plans it once (`PostgresStore.rows(prepared:)`) instead of once per call.
/// For the statements on a request's path, parse and plan cost PostgreSQL more than running them
/// (a broadcast's read of its event: 1.1 ms to parse and plan, 0.46 ms to run).
///
/// Sessions keep PostgreSQL's own choice of plan (`plan_cache_mode` auto): after five calls planned
/// for their values, a statement keeps its generic plan if that costs no more. Forcing the generic
/// plan on the session is not an option: it applies to every statement with parameters, the
/// unnamed ones PostgresNIO sends for each query included, and the queries that filter on an
/// optional value (`$1 IS NULL OR ...`, the audience's page) lose the folding of what was not
/// given (a 200,000-token start fan-out ran at 0.13 of the h2load ceiling with it, 0.38 without).
/// What a shape's statement must be, since its plan may be the generic one and PostgreSQL infers
/// its parameters' types once:
/// - every parameter's type fixed by its column or a cast to the type Marquee binds (`bigint` for
///   an `Int`): a parameter inferred as `integer` would be read from the 8 bytes of an `Int`;
/// - constants that a partial index's predicate names written as literals, not bound: a generic
///   plan cannot prove the predicate from a parameter;
/// - a generic plan no dearer than one planned for a call's values, or PostgreSQL plans every call
///   again: `UNNEST` of a parameter reads as 10 rows, so a statement usually called with fewer
///   limits them to their count (`PostgresStore.registration`).
protocol PreparedQueryShape {
    /// The statement's name on each connection.
    static var name: String { get }
    /// The statement's text (built once, from any values).
    static var sql: String { get }
}

/// A call of a shape's statement with its values, taken from the query as the store builds it for
/// the call (the same builder makes the shape's text).
struct PreparedQuery<Shape: PreparedQueryShape>: PostgresPreparedStatement {
    typealias Row = PostgresRow

    static var name: String { Shape.name }
    static var sql: String { Shape.sql }

    /// The statement's values, in the order of `sql`'s placeholders.
    let bindings: PostgresBindings

    init(_ query: PostgresQuery) {
        assert(query.sql == Shape.sql, "\(Shape.name) was built with another text than its shape's")
        bindings = query.binds
    }

    func makeBindings() throws -> PostgresBindings { bindings }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
}

extension PostgresConnection {
    /// The rows of a shape's statement on this connection (within a transaction), which prepares
    /// it on its first call.
    func rows<Shape: PreparedQueryShape>(
        _ statement: PreparedQuery<Shape>,
        logger: Logger
    ) async throws
        -> [PostgresRow]
    {
        var rows: [PostgresRow] = []
        for try await row in try await execute(statement, logger: logger) {
            rows.append(row)
        }
        return rows
    }
}
