import Foundation
import PackagePlugin

/// Compiles the web console's files (`console/` at the package's root) into the target as one
/// generated Swift source, `ConsoleAssets+Files.swift`: every file's bytes, path and content type.
/// Every file and folder there is an input: editing a file regenerates the source, and so does
/// adding or removing one (its folder changes), since the generator lists the folder itself
/// rather than trusting the list SwiftPM planned with (SwiftPM does not plan again for a file
/// added outside `Sources/`).
@main
struct ConsoleAssetsPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        let root = context.package.directoryURL.appending(path: "console")
        let output = context.pluginWorkDirectoryURL.appending(path: "ConsoleAssets+Files.swift")
        var inputs: [URL] = [root]
        if let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) {
            for case let url as URL in walker { inputs.append(url) }
        }
        inputs.sort { $0.path < $1.path }
        return [
            .buildCommand(
                displayName: "Embedding the web console (console/)",
                executable: try context.tool(named: "ConsoleAssetsGenerator").url,
                arguments: [root.path, output.path],
                inputFiles: inputs,
                outputFiles: [output]
            )
        ]
    }
}
