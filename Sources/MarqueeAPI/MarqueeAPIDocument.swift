import Foundation

/// The OpenAPI document the API's types and routes are generated from, as shipped with the build.
public enum MarqueeAPIDocument {
    /// The YAML source of the document; `nil` if the resource bundle is missing from the install.
    public static func yaml() -> String? {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else { return nil }
        return try? String(contentsOf: url, encoding: .utf8)
    }
}
