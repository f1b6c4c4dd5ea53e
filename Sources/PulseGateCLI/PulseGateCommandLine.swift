import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// The `pulsegate` command line: parses arguments and runs the chosen component.
///
/// The executable only forwards `CommandLine.arguments` here, so tests drive the whole
/// program through ``run(arguments:environment:output:)`` without spawning a process.
package enum PulseGateCommandLine {
    /// The usage text printed by `pulsegate --help`.
    package static let usage = """
        PulseGate \(PulseGateVersion.current): a durable OTLP/HTTP gateway for mobile telemetry that forwards \
        batches upstream as Pulse requests over msgtrans.

        USAGE: pulsegate <command> [options]

        COMMANDS:
          help        Show this help.
          serve       Run the OTLP/HTTP gateway.
          validate    Check the gateway's configuration without starting it (`ingest validate` for the ingest's).
          outbox      Show the gateway's outbox per app, list and requeue dead letters.
          ingest      Run the reference Pulse ingest server (msgtrans) on its own.
          version     Show the version.
          upload      The companion uploader: queue, seal and send telemetry (`pulsegate upload --help`).

        OPTIONS:
          -h, --help      Show this help.
          -V, --version   Show the version.

        Run `pulsegate <command> --help` for a command's options.

        """

    /// Process-wide settings for the `pulsegate` executable, before anything else runs: `SIGPIPE`
    /// and `SIGXFSZ` are ignored, so a closed pipe (standard error into `head`, a client that went
    /// away) and a file-size limit are write errors the code handles instead of signals that kill
    /// every command. Sockets already send with `MSG_NOSIGNAL`; this also covers the standard
    /// streams and libraries that do not.
    package static func prepareProcess() {
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Runs the command line and returns the process exit status
    /// (0 success, 1 runtime failure or an invalid configuration for `validate`, 2 usage error,
    /// 3 `upload flush` left batches undelivered).
    package static func run(
        arguments: [String],
        environment: [String: String],
        output: CommandLineOutput
    ) async -> Int32 {
        do {
            try await dispatch(arguments: arguments, environment: environment, output: output)
            return 0
        } catch let error as CLIError {
            // The operator reads the message (and its cause), not the code the exit status carries.
            let cause = error.underlying.map { ": \($0)" } ?? ""
            output.standardError("pulsegate: error: \(error.message)\(cause)\n")
            if error.code == .usage {
                output.standardError("Run `pulsegate --help` for usage.\n")
            }
            return error.exitStatus
        } catch {
            output.standardError("pulsegate: error: \(error)\n")
            return 1
        }
    }

    private static func dispatch(
        arguments: [String],
        environment: [String: String],
        output: CommandLineOutput
    ) async throws {
        guard let first = arguments.first else {
            output.standardOutput(usage)
            return
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help", "help":
            output.standardOutput(usage)
        case "serve": try await ServeCommand.run(arguments: rest, environment: environment, output: output)
        case "validate": try ValidateCommand.runGateway(arguments: rest, environment: environment, output: output)
        case "outbox": try await OutboxCommand.run(arguments: rest, environment: environment, output: output)
        case "-V", "--version", "version":
            guard rest.isEmpty else {
                throw CLIError(.usage, "'\(first)' takes no arguments, got '\(rest[0])'")
            }
            output.standardOutput("pulsegate \(PulseGateVersion.current)\n")
        case "ingest": try await IngestCommand.run(arguments: rest, environment: environment, output: output)
        case "upload": try await UploadCommand.run(arguments: rest, environment: environment, output: output)
        default:
            if first.hasPrefix("-") {
                throw CLIError(.usage, "unknown option '\(first)'")
            }
            throw CLIError(.usage, "unknown command '\(first)'")
        }
    }
}
