/// The one command-line flag parser of `pulsegate`'s commands and the benchmarks.
///
/// Long flags only: `--name value` and `--name=value` for a flag that takes a value (the next
/// argument is its value whatever it looks like), `--name` alone for a boolean. A flag may be
/// given more than once (``ParsedArguments/values(_:)`` keeps every value in order,
/// ``ParsedArguments/value(_:)`` is the last). Anything not starting with `-` (and `-` itself) is
/// a positional argument; after `--` every argument is. `-h` and `--help` ask for help: parsing
/// stops there and returns `nil`. A flag that is not given falls back to its environment variable
/// when that is set and not empty.
///
/// ```swift
/// let parser = FlagParser(
///     command: "outbox",
///     flags: [.value("--data-dir", environment: "PULSEGATE_DATA_DIR"), .boolean("--all")])
/// guard let parsed = try parser.parse(arguments, environment: environment) else { return printUsage() }
/// let directory = parsed.value("--data-dir") ?? "pulsegate-data"
/// ```
package struct FlagParser: Sendable {
    /// The command the errors name (`serve`, `ingest validate`, `msgtrans-scale`).
    package var command: String
    /// The flags the command takes.
    package var flags: [Flag]
    /// Whether positional arguments are allowed; when not, one is a ``UsageError``.
    package var allowsPositional: Bool

    /// The arguments that ask for help.
    package static let helpFlags: Set<String> = ["-h", "--help"]

    package init(command: String, flags: [Flag], allowsPositional: Bool = false) {
        self.command = command
        self.flags = flags
        self.allowsPositional = allowsPositional
    }

    /// Parses `arguments` (without the executable and command names); `nil` when help was asked for.
    ///
    /// - Throws: ``UsageError`` naming the flag: unknown, missing its value, a value given to a
    ///   boolean, or a positional argument where none is allowed.
    package func parse(_ arguments: [String], environment: [String: String] = [:]) throws(UsageError)
        -> ParsedArguments?
    {
        var byName: [String: Flag] = [:]
        for flag in flags { byName[flag.name] = flag }
        var parsed = ParsedArguments()
        var index = 0
        var onlyPositional = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if onlyPositional || argument == "-" || !argument.hasPrefix("-") {
                guard allowsPositional else { throw UsageError(command, .unexpectedArgument(argument)) }
                parsed.positional.append(argument)
                continue
            }
            if argument == "--" {
                onlyPositional = true
                continue
            }
            if Self.helpFlags.contains(argument) { return nil }
            var name = argument
            var inline: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let flag = byName[name] else { throw UsageError(command, .unknownOption(name)) }
            switch flag.kind {
            case .boolean:
                guard inline == nil else { throw UsageError(command, .unexpectedValue(name)) }
                parsed.given[name, default: []].append("true")
            case .value:
                if let inline {
                    parsed.given[name, default: []].append(inline)
                } else {
                    guard index < arguments.count else { throw UsageError(command, .missingValue(name)) }
                    parsed.given[name, default: []].append(arguments[index])
                    index += 1
                }
            }
        }
        for flag in flags where parsed.given[flag.name] == nil {
            if let variable = flag.environment, let value = environment[variable], !value.isEmpty {
                parsed.fromEnvironment[flag.name] = value
            }
        }
        return parsed
    }
}

/// One flag a command takes.
package struct Flag: Sendable, Equatable {
    /// Whether the flag takes a value.
    package enum Kind: Sendable, Equatable {
        /// `--name value` or `--name=value`.
        case value
        /// `--name`, on or absent.
        case boolean
    }

    /// The flag as typed, with its dashes: `--listen`.
    package var name: String
    package var kind: Kind
    /// The environment variable a value flag falls back to.
    package var environment: String?

    /// A flag that takes a value, falling back to `environment` when given.
    package static func value(_ name: String, environment: String? = nil) -> Flag {
        Flag(name: name, kind: .value, environment: environment)
    }

    /// A flag that takes no value.
    package static func boolean(_ name: String) -> Flag {
        Flag(name: name, kind: .boolean, environment: nil)
    }
}

/// What ``FlagParser/parse(_:environment:)`` found.
package struct ParsedArguments: Sendable, Equatable {
    /// The positional arguments, in order.
    package internal(set) var positional: [String] = []
    /// The values given on the command line, per flag, in order.
    var given: [String: [String]] = [:]
    /// The environment's value of each value flag not given on the command line.
    var fromEnvironment: [String: String] = [:]

    /// The flag's last value on the command line, else its environment variable's value.
    package func value(_ name: String) -> String? {
        given[name]?.last ?? fromEnvironment[name]
    }

    /// Every value the flag was given on the command line, in order (else the environment's one).
    package func values(_ name: String) -> [String] {
        given[name] ?? fromEnvironment[name].map { [$0] } ?? []
    }

    /// Whether the flag was given on the command line.
    package func isSet(_ name: String) -> Bool {
        given[name] != nil
    }

    /// The flag's value as an integer in `range`.
    ///
    /// - Throws: ``UsageError`` naming the flag and the value when the value is not one.
    package func integer(_ name: String, in range: ClosedRange<Int>, command: String) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(command, .invalidValue(name, text, Self.describe(range)))
        }
        return number
    }

    /// The flag's value as a number in `range`.
    ///
    /// - Throws: ``UsageError`` naming the flag and the value when the value is not one.
    package func number(_ name: String, in range: ClosedRange<Double>, command: String) throws(UsageError) -> Double? {
        guard let text = value(name) else { return nil }
        guard let number = Double(text), number.isFinite, range.contains(number) else {
            let expected =
                range.upperBound == .infinity
                ? "a number of at least \(range.lowerBound)"
                : "a number from \(range.lowerBound) to \(range.upperBound)"
            throw UsageError(command, .invalidValue(name, text, expected))
        }
        return number
    }

    private static func describe(_ range: ClosedRange<Int>) -> String {
        switch (range.lowerBound, range.upperBound) {
        case (0, Int.max): "a non-negative integer"
        case (let low, Int.max): "a whole number of at least \(low)"
        case (let low, let high): "a whole number from \(low) to \(high)"
        }
    }
}

/// A command line that is not valid: the process exits with ``exitStatus``.
package struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    package enum Problem: Sendable, Equatable {
        /// An argument starting with `-` that is no flag of the command.
        case unknownOption(String)
        /// A value flag at the end of the arguments.
        case missingValue(String)
        /// `--boolean=value`.
        case unexpectedValue(String)
        /// A positional argument where the command takes none.
        case unexpectedArgument(String)
        /// A flag's value that is not what it should be: flag, value, what it must be.
        case invalidValue(String, String, String)
    }

    /// The exit status of a usage error, for every command and benchmark.
    package static let exitStatus: Int32 = 2

    /// The command whose arguments these are.
    package var command: String
    package var problem: Problem

    package init(_ command: String, _ problem: Problem) {
        self.command = command
        self.problem = problem
    }

    /// The message without the command: `unknown option '--port'`.
    package var message: String {
        switch problem {
        case .unknownOption(let name): "unknown option '\(name)'"
        case .missingValue(let name): "\(name) needs a value"
        case .unexpectedValue(let name): "\(name) takes no value"
        case .unexpectedArgument(let argument): "unexpected argument '\(argument)'"
        case .invalidValue(let name, let value, let expected): "\(name) takes \(expected), not '\(value)'"
        }
    }

    /// `serve: unknown option '--port'`.
    package var description: String {
        command.isEmpty ? message : "\(command): \(message)"
    }
}
