import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `bash -c script` and returns its standard output, with `posix_spawn` on a thread of its
/// own. Neither Foundation's `Process` nor a blocking wait on one of Swift concurrency's few pool
/// threads: with every other test running in parallel, both stalled the whole test process.
enum ShellCommand {
    struct Failed: Error, CustomStringConvertible {
        let description: String
    }

    static func run(_ script: String, environment: [String: String] = [:]) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(script, environment: environment) })
            }.start()
        }
    }

    private static func runBlocking(_ script: String, environment: [String: String]) throws -> String {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failed(description: "pipe failed") }
        // Close-on-exec, so that children spawned concurrently by other tests do not keep the
        // write end open and this read never sees end of file.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)

        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let arguments: [String] = ["/bin/bash", "-c", script]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/bin/bash", &actions, nil, argv, envp)
        close(fds[1])
        guard spawned == 0 else {
            close(fds[0])
            throw Failed(description: "posix_spawn failed: \(spawned)")
        }
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
            if count > 0 {
                output.append(contentsOf: buffer[0..<count])
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        close(fds[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1, errno == EINTR {}
        return String(decoding: output, as: UTF8.self)
    }
}
