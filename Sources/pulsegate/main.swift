import Foundation
import PulseGateCLI

// The executable stays thin: everything lives in PulseGateCLI so tests can run it without `main`.
let output = CommandLineOutput(
    standardOutput: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
    standardError: { text in FileHandle.standardError.write(Data(text.utf8)) }
)
let status = await PulseGateCommandLine.run(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    output: output
)
exit(status)
