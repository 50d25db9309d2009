import Foundation
import HTTPTypes
import Hummingbird
import MarqueeAPI
import NIOCore
import Yams

/// `/openapi.json` (and `/openapi.yaml`): the document the routes are generated from, as built.
struct OpenAPIDocumentRoute {
    let json: ByteBuffer
    let yaml: ByteBuffer

    init() throws {
        guard let yaml = MarqueeAPIDocument.yaml() else {
            throw ConfigurationError(
                key: "openapi",
                "the OpenAPI document is missing from the installation (MarqueeAPI resources)"
            )
        }
        let object = try Yams.load(yaml: yaml)
        let data = try JSONSerialization.data(withJSONObject: object as Any, options: [.sortedKeys])
        self.json = ByteBuffer(bytes: data)
        self.yaml = ByteBuffer(string: yaml)
    }

    func register<Context: RequestContext>(on router: Router<Context>) {
        let json = json
        let yaml = yaml
        router.get("/openapi.json") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: json))
        }
        router.get("/openapi.yaml") { _, _ in
            Response(status: .ok, headers: [.contentType: "application/yaml"], body: .init(byteBuffer: yaml))
        }
    }
}
