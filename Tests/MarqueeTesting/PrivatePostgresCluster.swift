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

    /// Runs a command to its end, its output in a file. With `posix_spawn` and `waitpid`, not
    /// `Process`: Foundation's `Process` here left `runuser` unreaped after `pg_ctl start`, and
    /// neither `waitUntilExit()` nor `terminationHandler` ever returned.
    private static func output(of arguments: [String], asPostgres: Bool) async throws -> String {
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "marquee-pg-\(UUID().uuidString).out"
        ).path
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let command = (asPostgres ? ["runuser", "-u", "postgres", "--"] : []) + arguments
        let line =
            command.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }.joined(separator: " ")
            + " >'\(outputFile)' 2>&1 </dev/null"
        // On NIO's blocking pool, not in a task: `waitpid` blocks its thread until the command ends
        // (initdb, `pg_ctl start -w`: seconds, more on a busy machine), and a blocked thread of the
        // cooperative pool (two threads on two cores) would stall every other test in the process.
        let status = try await NIOThreadPool.singleton.runIfActive { try spawnAndWait(["/bin/sh", "-c", line]) }
        let output = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        guard status == 0 else {
            throw TestSetupError("\(arguments.joined(separator: " ")) failed (\(status)): \(output.suffix(800))")
        }
        return output
    }

    /// The exit status of `arguments` run to its end; -1 if it was ended by a signal.
    private static func spawnAndWait(_ arguments: [String]) throws -> Int32 {
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, arguments[0], nil, nil, argv, environ)
        guard spawned == 0 else { throw TestSetupError("posix_spawn \(arguments[0]) failed (\(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw TestSetupError("waitpid failed (\(errno))") }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
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
