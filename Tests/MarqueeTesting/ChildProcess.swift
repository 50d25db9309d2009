import Foundation
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// A command the test process runs to its end (`initdb`, `pg_ctl`, `sqlite3`, `curl`), with what it
/// printed. Two ways a child hung a whole suite before, which this shuts out:
/// - A child inherited descriptors of the test process: `pg_ctl start` leaves a postmaster running
///   for the rest of a test, and one that inherited the write end of another test's pipe kept that
///   test's read from ever seeing end of file. Here the child has its standard streams and nothing
///   else (`posix_spawn_file_actions_addclosefrom_np` from 3), and its output goes to a file, not
///   a pipe, so no reader waits for every holder of a write end to close it.
/// - A wait blocked a thread of Swift concurrency's cooperative pool (two on two cores), stalling
///   every other test of the process until the child ended. `waitpid` runs on NIO's blocking pool.
/// Foundation's `Process` does neither reliably here: it once left a child unreaped, and neither
/// `waitUntilExit()` nor `terminationHandler` returned.
public enum ChildProcess {
    /// Where the child's standard error goes.
    public enum Errors: Sendable {
        /// With its standard output, in the order written.
        case merged
        case discarded
    }

    /// How a child ended and what it printed.
    public struct Ended: Sendable {
        /// The exit status, or -1 if a signal ended it.
        public let status: Int32
        public let output: String
    }

    /// Runs `arguments` (the first an absolute path) to its end, with `environment` (the test
    /// process's own when nil) and standard input from /dev/null.
    public static func run(
        _ arguments: [String],
        environment: [String: String]? = nil,
        errors: Errors = .merged
    ) async throws -> Ended {
        let outputFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("marquee-child-\(UUID().uuidString).out").path
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let status = try await NIOThreadPool.singleton.runIfActive {
            try spawnAndWait(arguments, environment: environment, outputFile: outputFile, errors: errors)
        }
        let output = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        return Ended(status: status, output: output)
    }

    private static func spawnAndWait(
        _ arguments: [String],
        environment: [String: String]?,
        outputFile: String,
        errors: Errors
    ) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var setup = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if setup == 0 {
            setup = posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        }
        if setup == 0 {
            setup =
                errors == .merged
                ? posix_spawn_file_actions_adddup2(&actions, 1, 2)
                : posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        if setup == 0 { setup = addCloseFrom(&actions, 3) }
        guard setup == 0 else { throw TestSetupError("posix_spawn's file actions failed (\(setup))") }

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let spawned =
            envp.map { envp in posix_spawn(&pid, arguments[0], &actions, nil, argv, envp) }
            ?? posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestSetupError("posix_spawn \(arguments[0]) failed (\(spawned))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw TestSetupError("waitpid failed (\(errno))") }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }
}

/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which its headers declare
/// only for `_GNU_SOURCE`, so Swift's Glibc module does not show it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
private func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) -> Int32
