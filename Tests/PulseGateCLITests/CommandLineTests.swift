import Synchronization
import Testing

@testable import PulseGateCLI

/// Captures what the command line writes.
final class CapturedOutput: Sendable {
    let out = Mutex("")
    let err = Mutex("")

    var output: CommandLineOutput {
        CommandLineOutput(
            standardOutput: { text in self.out.withLock { $0 += text } },
            standardError: { text in self.err.withLock { $0 += text } }
        )
    }

    var stdout: String { out.withLock { $0 } }
    var stderr: String { err.withLock { $0 } }
}

/// Runs the command line in this process with `arguments` and `environment`; returns its exit
/// status and what it wrote.
func run(_ arguments: [String], environment: [String: String] = [:]) async -> (Int32, CapturedOutput) {
    let captured = CapturedOutput()
    let status = await PulseGateCommandLine.run(
        arguments: arguments, environment: environment, output: captured.output)
    return (status, captured)
}

@Suite struct CommandLineTests {
    @Test func helpPrintsUsageAndSucceeds() async {
        for flag in ["--help", "-h", "help"] {
            let (status, captured) = await run([flag])
            #expect(status == 0)
            #expect(captured.stdout.contains("USAGE: pulsegate <command>"))
            #expect(captured.stderr.isEmpty)
        }
    }

    @Test func noArgumentsPrintsUsage() async {
        let (status, captured) = await run([])
        #expect(status == 0)
        #expect(captured.stdout.contains("USAGE"))
    }

    @Test func versionPrintsVersion() async {
        let (status, captured) = await run(["--version"])
        #expect(status == 0)
        #expect(captured.stdout == "pulsegate \(PulseGateVersion.current)\n")
    }

    @Test func unknownCommandIsUsageErrorWithExitTwo() async {
        let (status, captured) = await run(["frobnicate"])
        #expect(status == 2)
        #expect(captured.stderr.contains("unknown command 'frobnicate'"))
        #expect(captured.stdout.isEmpty)
    }

    @Test func unknownOptionIsUsageErrorWithExitTwo() async {
        let (status, captured) = await run(["--bogus"])
        #expect(status == 2)
        #expect(captured.stderr.contains("unknown option '--bogus'"))
    }

    @Test func versionRejectsExtraArguments() async {
        let (status, captured) = await run(["--version", "extra"])
        #expect(status == 2)
        #expect(captured.stderr.contains("takes no arguments"))
    }

    /// Every command parses with the one flag parser: help prints the command's usage with exit 0,
    /// an unknown flag or a flag without its value is a usage error (exit 2) naming the flag.
    @Test(arguments: [
        (["serve"], "USAGE: pulsegate serve"), (["validate"], "USAGE: pulsegate validate"),
        (["ingest"], "USAGE: pulsegate ingest"), (["ingest", "validate"], "USAGE: pulsegate validate"),
        (["outbox"], "USAGE: pulsegate outbox"), (["upload", "status"], "USAGE: pulsegate upload"),
    ])
    func everyCommandSharesTheFlagRules(command: [String], usage: String) async {
        let (helpStatus, help) = await run(command + ["--help"])
        #expect(helpStatus == 0)
        #expect(help.stdout.hasPrefix(usage))
        let (unknownStatus, unknown) = await run(command + ["--bogus=secret"])
        #expect(unknownStatus == 2)
        #expect(unknown.stderr.contains("unknown option '--bogus'"))
        #expect(!unknown.stderr.contains("secret"))
        let (missingStatus, missing) = await run(command + ["--data-dir"])
        #expect(missingStatus == 2)
        #expect(
            missing.stderr.contains(
                command == ["ingest", "validate"] ? "unknown option '--data-dir'" : "--data-dir needs a value"))
    }
}
