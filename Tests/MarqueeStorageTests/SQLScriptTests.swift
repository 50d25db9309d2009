import Testing

@testable import MarqueeStorage

@Suite("Splitting migration files into statements")
struct SQLScriptTests {
    @Test("semicolons inside comments, quotes and dollar-quoted bodies do not split")
    func splitting() {
        let script = """
            -- a comment; with a semicolon
            CREATE TABLE a (note text DEFAULT 'x;y');
            /* block; comment */ CREATE TABLE "b;c" (id int);
            CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;
            SELECT $1;
            -- trailing comment
            """
        #expect(
            SQLScript.statements(in: script) == [
                "-- a comment; with a semicolon\nCREATE TABLE a (note text DEFAULT 'x;y')",
                "/* block; comment */ CREATE TABLE \"b;c\" (id int)",
                "CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql",
                "SELECT $1",
            ]
        )
    }
}
