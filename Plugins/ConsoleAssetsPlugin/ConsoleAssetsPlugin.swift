import Foundation
import PackagePlugin

/// Compiles the web console's files (`console/` at the package's root) into the target as one
/// generated Swift source, `ConsoleAssets+Files.swift`: every file's bytes, path and content type.
/// Every file there is an input, so editing, adding or removing one regenerates the source.
@main
struct ConsoleAssetsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let root = context.package.directoryURL.appending(path: "console")
        let output = context.pluginWorkDirectoryURL.appending(path: "ConsoleAssets+Files.swift")
        var inputs: [URL] = []
        if let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) {
            for case let url as URL in walker where (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                inputs.append(url)
            }
        }
        inputs.sort { $0.path < $1.path }
        return [
            .buildCommand(
                displayName: "Embedding the web console (\(inputs.count) files)",
                executable: try context.tool(named: "ConsoleAssetsGenerator").url,
                arguments: [root.path, output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
