import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The embedded store's files are readable by their owner only: a folder the store makes is 0700,
/// and the database file is 0600 (SQLite gives its `-wal` and `-shm` files the database file's
/// mode). A database file found readable by others is tightened; a folder that already existed is
/// left as it is (it may be shared, as `/var/lib` is).
enum PrivateFiles {
    static let fileMode: mode_t = 0o600
    static let folderMode: Int = 0o700

    static func prepare(databaseAt path: String) throws {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try createFolder(folder.path)
        let descriptor = open(path, O_CREAT | O_RDWR | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        close(descriptor)
        for file in [path, path + "-wal", path + "-shm", path + "-journal"] {
            tighten(file)
        }
    }

    /// Makes `path` (and any missing parent) owner-only; an existing folder is left alone.
    static func createFolder(_ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: path,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: folderMode]
        )
    }

    /// Takes group and other permissions off an existing file.
    static func tighten(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & 0o077 != 0 else { return }
        _ = chmod(path, status.st_mode & 0o700)
    }
}
