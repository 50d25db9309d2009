import Foundation
import NIOPosix

/// A PostgreSQL cluster of one test's own, for a test that restarts or stops PostgreSQL (the shared
/// `PostgresTestCluster` serves every other test at once). Made with Debian's `initdb` in a
/// temporary folder, trusted on loopback, on a port of its own; as root, run as the `postgres` user
/// (initdb refuses root), as `scripts/with-postgres` does.
public final class PrivatePostgresCluster: Sendable {
    public let port: Int
    public let user = "marquee"
    private let folder: String
    private let binaries: String
    private let asPostgres: Bool

    private var data: String { folder + "/data" }
    private var log: String { folder + "/server.log" }

    /// Makes and starts a cluster.
    public static func start() async throws -> PrivatePostgresCluster {
        let binaries = try await Self.output(of: ["pg_config", "--bindir"], asPostgres: false).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-pg-\(UUID().uuidString.prefix(8))"
        ).path
        try FileManager.default.createDirectory(
            atPath: folder,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755]
        )
        let asPostgres = getuid() == 0
        if asPostgres { _ = try await Self.output(of: ["chown", "postgres:postgres", folder], asPostgres: false) }
        var cluster = PrivatePostgresCluster(
            port: try await Self.freePort(),
            folder: folder,
            binaries: binaries,
            asPostgres: asPostgres
        )
        // `--no-sync`: a throwaway cluster; flushing its files to disk only loads a busy machine's disk.
        _ = try await cluster.run([
            "initdb", "-D", cluster.data, "-U", cluster.user, "--auth-local=trust", "--auth-host=trust", "--locale=C",
            "-E", "UTF8", "--no-sync",
        ])
        // The port was free when it was chosen; another process may have bound it since (it is
        // outside the range the kernel hands out on its own, so only another explicit choice can).
        // Then the cluster starts on another one.
        var attempts = 1
        while true {
            do {
                try await cluster.startServer()
                return cluster
            } catch  where attempts < 5 && cluster.portWasTaken {
                attempts += 1
                // The next start's log alone tells whether its port was taken too.
                try? FileManager.default.removeItem(atPath: cluster.log)
                cluster = PrivatePostgresCluster(
                    port: try await Self.freePort(),
                    folder: folder,
                    binaries: binaries,
                    asPostgres: asPostgres
                )
            }
        }
    }

    /// Whether the server's last start failed because its port was bound by someone else.
    private var portWasTaken: Bool {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("Address already in use")
    }

    private init(port: Int, folder: String, binaries: String, asPostgres: Bool) {
        self.port = port
        self.folder = folder
        self.binaries = binaries
        self.asPostgres = asPostgres
    }

    /// `database.url` for the `postgres` database.
    public var url: String { "postgres://\(user)@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// The crash: PostgreSQL stops at once (no checkpoint, every client cut off), stays down for
    /// `downFor` (clients' connection attempts fail meanwhile), then starts again and recovers from
    /// its write-ahead log, on the same port.
    public func restartImmediately(downFor: Duration) async throws {
        _ = try await run(["pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"])
        try await Task.sleep(for: downFor)
        try await startServer()
    }

    /// Stops the server and removes the cluster.
    public func remove() async {
        _ = try? await run(["pg_ctl", "-D", data, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }

    private func startServer() async throws {
        let options =
            """
            -c listen_addresses=127.0.0.1 -c port=\(port) -c unix_socket_directories=\(folder) -c \
            max_connections=100 -c fsync=off
            """
        _ = try await run(["pg_ctl", "-D", data, "-l", log, "-w", "-t", "120", "-o", options, "start"])
    }

    private func run(_ arguments: [String]) async throws -> String {
        var arguments = arguments
        arguments[0] = binaries + "/" + arguments[0]
        return try await Self.output(of: arguments, asPostgres: asPostgres)
    }

    /// Runs a command to its end (`ChildProcess`: its output in a file, none of the test process's
    /// descriptors inherited by the postmaster that `pg_ctl start` leaves running).
    private static func output(of arguments: [String], asPostgres: Bool) async throws -> String {
        let command = (asPostgres ? ["runuser", "-u", "postgres", "--"] : []) + arguments
        let line = command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
        let ended = try await ChildProcess.run(["/bin/sh", "-c", line])
        guard ended.status == 0 else {
            throw TestSetupError(
                "\(arguments.joined(separator: " ")) failed (\(ended.status)): \(ended.output.suffix(800))"
            )
        }
        return ended.output
    }

    /// A port nobody listens on now, below the kernel's ephemeral range, from `scripts/free-port`
    /// (which says why): a port from binding port 0 was taken by another test's outgoing connection
    /// within the seconds `initdb` took, and the cluster failed to start.
    private static func freePort() async throws -> Int {
        let script = SourceTree.root.appendingPathComponent("scripts/free-port").path
        let printed = try await output(of: [script], asPostgres: false)
        guard let port = Int(printed.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestSetupError("scripts/free-port printed \(printed)")
        }
        return port
    }
}
