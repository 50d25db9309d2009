import Crypto
import Foundation
import NIOCore

/// The web console's static files, compiled into the binary from `console/` by
/// ConsoleAssetsPlugin (`files` is generated): the service serves them wherever it runs, with no
/// resource bundle beside it that could go missing.
enum ConsoleAssets {
    /// One file as the generator wrote it.
    struct File: Sendable {
        /// Its path below `console/`, e.g. `js/app.js`.
        var path: String
        var contentType: String
        var base64: String
    }

    /// One file ready to serve: its bytes and their strong ETag (a SHA-256 prefix of the bytes).
    struct Asset: Sendable {
        var contentType: String
        var body: ByteBuffer
        var etag: String
    }

    /// The files by path, decoded once.
    static let byPath: [String: Asset] = {
        var assets: [String: Asset] = [:]
        for file in files {
            guard let data = Data(base64Encoded: file.base64) else { continue }
            let digest = SHA256.hash(data: data).prefix(12).map { String(format: "%02x", $0) }.joined()
            assets[file.path] = Asset(
                contentType: file.contentType,
                body: ByteBuffer(bytes: data),
                etag: "\"\(digest)\""
            )
        }
        return assets
    }()
}
