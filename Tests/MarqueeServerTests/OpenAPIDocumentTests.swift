import Foundation
import MarqueeTesting
import Testing

/// The document and the routes cannot drift apart: the routes are generated from it, and every
/// operation it lists is answered by the running server (never "no such route").
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    @Test("every documented operation is served, and /openapi.json is the document")
    func everyOperationServed() async throws {
        try await TestServer.run(.sqlite) { server in
            let document = try await server.client.send("GET", "/openapi.json")
            #expect(document.status == 200)
            let paths = try #require(document.json["paths"] as? [String: [String: Any]])
            let app = try await server.makeApp()
            var operations = 0
            for (path, item) in paths {
                for method in ["get", "put", "post", "patch", "delete"] where item[method] != nil {
                    operations += 1
                    let concrete =
                        path
                        .replacingOccurrences(of: "{appID}", with: app.id)
                        .replacingOccurrences(of: "{environment}", with: "sandbox")
                        .replacingOccurrences(of: "{", with: "x")
                        .replacingOccurrences(of: "}", with: "")
                    let response = try await server.client.send(
                        method.uppercased(),
                        concrete,
                        key: app.adminKey,
                        json: method == "get" || method == "delete" ? nil : [String: Any]()
                    )
                    let type = response.json["type"] as? String
                    #expect(
                        !(response.status == 404
                            && (response.json["detail"] as? String ?? "").contains("no such route"))
                            && type != "/problems/method-not-allowed",
                        """
                        \(method.uppercased()) \(path) is documented but not served: \(response.status) \
                        \(response.text)
                        """
                    )
                }
            }
            #expect(operations >= 25)
        }
    }
}
