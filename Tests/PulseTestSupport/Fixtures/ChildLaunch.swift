package import Foundation

/// Starts `executable` with `arguments` and the given standard streams (each a `Pipe` or a
/// `FileHandle`); standard input is /dev/null unless `input` says otherwise.
package func launch(
    _ executable: String, _ arguments: [String], input: Any = FileHandle.nullDevice, output: Any, error: Any
) throws -> Process {
    let child = Process()
    child.executableURL = URL(fileURLWithPath: executable)
    child.arguments = arguments
    child.standardInput = input
    child.standardOutput = output
    child.standardError = error
    try child.run()
    return child
}
