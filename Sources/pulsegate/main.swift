import Foundation
import PulseGateCLI

// The executable stays thin: everything lives in PulseGateCLI so tests can run it without `main`.
PulseGateCommandLine.prepareProcess()
let status = await PulseGateCommandLine.run(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    output: .processStreams()
)
exit(status)
