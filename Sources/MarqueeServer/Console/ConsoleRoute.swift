import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/console`: the web console, static files over the public API only. Every answer carries a
/// strict Content-Security-Policy (the console's own scripts and styles, nothing inline, no other
/// origin), a strong ETag, and `Cache-Control: no-cache`, so that a browser revalidates each time
/// and gets a 304 while the binary is the same.
enum ConsoleRoute {
    static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    static func register<Context: RequestContext>(on router: Router<Context>) {
        router.get("/console") { request, _ in answer(request, path: "index.html") }
        router.get("/console/**") { request, _ in
            answer(request, path: String(request.uri.path.dropFirst("/console/".count)))
        }
    }

    static func answer(_ request: Request, path: String) -> Response {
        var headers: HTTPFields = [
            .contentSecurityPolicy: contentSecurityPolicy,
            .xContentTypeOptions: "nosniff",
            .init("Referrer-Policy")!: "no-referrer",
            .init("X-Frame-Options")!: "DENY",
            .cacheControl: "no-cache",
        ]
        guard let asset = ConsoleAssets.byPath[path.isEmpty ? "index.html" : path] else {
            headers[.contentType] = "text/plain; charset=utf-8"
            return Response(
                status: .notFound,
                headers: headers,
                body: .init(byteBuffer: ByteBuffer(string: "not found\n"))
            )
        }
        headers[.eTag] = asset.etag
        if let tags = request.headers[.ifNoneMatch],
            tags.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == asset.etag || $0.trimmingCharacters(in: .whitespaces) == "*"
            })
        {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: asset.body))
    }
}
