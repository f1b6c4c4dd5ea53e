import PulseKit

extension FlagParser {
    /// ``FlagParser/parse(_:environment:)`` for a `pulsegate` command: a usage error becomes the
    /// command line's usage ``CLIError`` (exit status 2); `nil` when help was asked for.
    func parseCommand(_ arguments: [String], environment: [String: String]) throws(CLIError) -> ParsedArguments? {
        try withUsageErrors { () throws(UsageError) in try parse(arguments, environment: environment) }
    }
}

/// Runs `body`, turning its ``UsageError`` (a flag's value checked with ``ParsedArguments``'
/// readers) into the command line's usage ``CLIError``.
func withUsageErrors<Value>(_ body: () throws(UsageError) -> Value) throws(CLIError) -> Value {
    do {
        return try body()
    } catch {
        throw CLIError(.usage, error.description)
    }
}
