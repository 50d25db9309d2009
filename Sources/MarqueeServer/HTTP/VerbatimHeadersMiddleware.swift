import Foundation
import HTTPTypes
import OpenAPIRuntime

/// Sends the response headers the document defines (`ETag`, `Cache-Control`, `Link`, `Location`)
/// as written. The generated code serialises header values in OpenAPI's `simple` style, which
/// percent-encodes `"`, `,`, `=` and `;`: an `ETag` of `%22…%22` is not an entity tag to a cache,
/// and `private%2C%20max-age%3D60` is no cache directive. The values are Marquee's own, so decoding
/// them once restores exactly what the handler set.
struct VerbatimHeadersMiddleware: ServerMiddleware {
    static let names: [HTTPField.Name] = [.eTag, .cacheControl, .location, HTTPField.Name("Link")!]

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var (response, responseBody) = try await next(request, body, metadata)
        for name in Self.names {
            if let value = response.headerFields[name], value.contains("%"), let decoded = value.removingPercentEncoding
            {
                response.headerFields[name] = decoded
            }
        }
        return (response, responseBody)
    }
}
