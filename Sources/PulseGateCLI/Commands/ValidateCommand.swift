import PulseGateway
import PulseIngest
import PulseJSON
import PulseKit

/// `pulsegate validate` (the gateway's settings) and `pulsegate ingest validate` (the ingest
/// server's config file): every problem is listed with its key path, exit status 0 when there is
/// none, 1 otherwise. They run the same checks as `serve` and `ingest` at start and on SIGHUP.
enum ValidateCommand {
    static let usage = """
        USAGE: pulsegate validate [--config FILE] [serve options]
               pulsegate ingest validate --config FILE

        Checks a configuration without starting anything: parses it, checks every value and the
        rules between values, and lists every problem with its key path (one per line on standard
        output). Exits with 0 when the configuration is valid, 1 when it is not.

        `pulsegate validate` takes the options and environment variables of `pulsegate serve`
        (--listen, --upstream, --data-dir, --config, --tls-cert, --tls-key) and checks what serve
        would run with, including that the TLS files can be read and that the key belongs to the
        certificate. `pulsegate ingest validate` checks an ingest config file (docs/ingest.md).

        """

    /// `pulsegate validate …`.
    static func runGateway(arguments: [String], environment: [String: String], output: CommandLineOutput) throws {
        guard let options = try ServeCommand.parse(arguments, environment: environment, command: "validate") else {
            output.standardOutput(usage)
            return
        }
        let (_, problems) = ServeCommand.resolve(options)
        try report(problems, source: options.configPath ?? "the gateway settings", output: output)
    }

    /// `pulsegate ingest validate --config FILE` (or `PULSEGATE_INGEST_CONFIG`).
    static func runIngest(arguments: [String], environment: [String: String], output: CommandLineOutput) throws {
        let parser = FlagParser(
            command: "ingest validate", flags: [.value("--config", environment: "PULSEGATE_INGEST_CONFIG")])
        guard let parsed = try parser.parseCommand(arguments, environment: environment) else {
            output.standardOutput(usage)
            return
        }
        let path = parsed.value("--config")
        guard let path else { throw CLIError(.usage, "ingest validate: --config FILE is required") }
        let problems: [ConfigurationProblem]
        do {
            problems = IngestPolicy.check(json: try IngestPolicy.read(path: path)).1
        } catch {
            problems = [ConfigurationProblem("", error.message)]
        }
        try report(problems, source: path, output: output)
    }

    /// Prints `ok` or every problem; a non-empty list is an error with exit status 1.
    private static func report(_ problems: [ConfigurationProblem], source: String, output: CommandLineOutput) throws {
        guard !problems.isEmpty else {
            output.standardOutput("\(source): ok\n")
            return
        }
        for problem in problems {
            output.standardOutput("\(source): \(problem.path.isEmpty ? "(file)" : problem.path): \(problem.message)\n")
        }
        throw CLIError(.runtime, "validate: \(source) has \(ConfigurationProblem.count(problems))")
    }
}
