#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension FlagParser {
    /// ``parse(_:environment:)`` for an executable's `main` (the benchmarks): help prints `usage`
    /// on standard output and exits 0; a usage error prints its message and `usage` on standard
    /// error and exits with ``UsageError/exitStatus``.
    package func parseOrExit(_ arguments: [String], environment: [String: String] = [:], usage: String)
        -> ParsedArguments
    {
        let parsed = Self.exitOnUsageError(usage: usage) { () throws(UsageError) in
            try parse(arguments, environment: environment)
        }
        guard let parsed else {
            writeAll(STDOUT_FILENO, usage.hasSuffix("\n") ? usage : usage + "\n")
            exit(0)
        }
        return parsed
    }

    /// Runs `body` (a ``ParsedArguments`` reader, for example); on a usage error prints its message
    /// and `usage` on standard error and exits with ``UsageError/exitStatus``.
    package static func exitOnUsageError<Value>(usage: String, _ body: () throws(UsageError) -> Value) -> Value {
        do {
            return try body()
        } catch {
            exitWithUsageError(error.description, usage: usage)
        }
    }

    /// Prints `message` and `usage` on standard error and exits with ``UsageError/exitStatus``.
    package static func exitWithUsageError(_ message: String, usage: String) -> Never {
        writeAll(STDERR_FILENO, "error: \(message)\n\(usage.hasSuffix("\n") ? usage : usage + "\n")")
        exit(UsageError.exitStatus)
    }
}

/// Writes all of `text` to `descriptor` (the standard streams of an exiting executable).
private func writeAll(_ descriptor: Int32, _ text: String) {
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes { buffer in
            write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
        }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return }
        offset += written
    }
}
