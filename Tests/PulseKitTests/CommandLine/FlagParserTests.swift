import Testing

@testable import PulseKit

@Suite struct FlagParserTests {
    let parser = FlagParser(
        command: "serve",
        flags: [
            .value("--listen", environment: "PULSEGATE_LISTEN"), .value("--tag"), .boolean("--all"),
            .boolean("--json"),
        ],
        allowsPositional: true)

    func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> ParsedArguments {
        try #require(try parser.parse(arguments, environment: environment))
    }

    func failure(_ arguments: [String], _ parser: FlagParser? = nil) -> UsageError? {
        #expect(throws: UsageError.self) { try (parser ?? self.parser).parse(arguments) }
    }

    @Test func valuesSeparateAndInline() throws {
        let parsed = try parse(["--listen", "127.0.0.1:1", "--tag=a=b"])
        #expect(parsed.value("--listen") == "127.0.0.1:1")
        // Only the first `=` separates the name from the value.
        #expect(parsed.value("--tag") == "a=b")
        #expect(try parse(["--tag="]).value("--tag") == "")
        // The argument after a value flag is its value, whatever it looks like.
        #expect(try parse(["--tag", "--all"]).value("--tag") == "--all")
        #expect(try parse(["--tag", "-h"]).value("--tag") == "-h")
    }

    @Test func booleansAreSetOrAbsent() throws {
        let parsed = try parse(["--all"])
        #expect(parsed.isSet("--all"))
        #expect(!parsed.isSet("--json"))
        #expect(failure(["--all=yes"])?.description == "serve: --all takes no value")
    }

    @Test func repeatedFlagsKeepEveryValueAndTheLastWins() throws {
        let parsed = try parse(["--tag", "a", "--tag=b", "--tag", "c"])
        #expect(parsed.values("--tag") == ["a", "b", "c"])
        #expect(parsed.value("--tag") == "c")
        #expect(parsed.values("--listen").isEmpty)
    }

    @Test func positionalArgumentsInterleaveWithFlagsAndFollowDoubleDash() throws {
        let parsed = try parse(["requeue", "--all", "1", "-", "--", "--json", "-h"])
        #expect(parsed.positional == ["requeue", "1", "-", "--json", "-h"])
        #expect(parsed.isSet("--all"))
        #expect(!parsed.isSet("--json"))
        let strict = FlagParser(command: "ingest", flags: [.value("--listen")])
        #expect(failure(["serve"], strict)?.description == "ingest: unexpected argument 'serve'")
    }

    @Test func helpStopsParsing() throws {
        #expect(try parser.parse(["--help"]) == nil)
        #expect(try parser.parse(["status", "-h", "--bogus"]) == nil)
        // A problem before the help flag is reported first.
        #expect(failure(["--bogus", "--help"])?.problem == .unknownOption("--bogus"))
    }

    @Test func errorsNameTheFlagButNotItsValue() {
        #expect(failure(["--port", "1"])?.description == "serve: unknown option '--port'")
        #expect(failure(["--secret=hunter2"])?.description == "serve: unknown option '--secret'")
        #expect(failure(["-x"])?.description == "serve: unknown option '-x'")
        #expect(failure(["--listen"])?.description == "serve: --listen needs a value")
        #expect(failure(["--listen"])?.message == "--listen needs a value")
        #expect(UsageError.exitStatus == 2)
        #expect(UsageError("", .unknownOption("--x")).description == "unknown option '--x'")
    }

    @Test func theEnvironmentFillsFlagsNotGiven() throws {
        let environment = ["PULSEGATE_LISTEN": "0.0.0.0:1"]
        #expect(try parse([], environment: environment).value("--listen") == "0.0.0.0:1")
        #expect(try parse([], environment: environment).values("--listen") == ["0.0.0.0:1"])
        #expect(try parse(["--listen=[::1]:2"], environment: environment).value("--listen") == "[::1]:2")
        // A set but empty variable counts as unset.
        #expect(try parse([], environment: ["PULSEGATE_LISTEN": ""]).value("--listen") == nil)
        // The environment does not make a flag "given".
        #expect(!(try parse([], environment: environment).isSet("--listen")))
    }

    @Test func integerAndNumberReadersCheckTheRange() throws {
        let parsed = try parse(["--tag", "7", "--listen", "x"])
        #expect(try parsed.integer("--tag", in: 1...Int.max, command: "c") == 7)
        #expect(try parsed.integer("--missing", in: 1...Int.max, command: "c") == nil)
        #expect(try parsed.number("--tag", in: 0.5...Double.infinity, command: "c") == 7)
        let low = #expect(throws: UsageError.self) { try parsed.integer("--tag", in: 8...Int.max, command: "c") }
        #expect(low?.description == "c: --tag takes a whole number of at least 8, not '7'")
        let bounded = #expect(throws: UsageError.self) { try parsed.integer("--tag", in: 1...5, command: "c") }
        #expect(bounded?.description == "c: --tag takes a whole number from 1 to 5, not '7'")
        let text = #expect(throws: UsageError.self) { try parsed.integer("--listen", in: 0...Int.max, command: "c") }
        #expect(text?.description == "c: --listen takes a non-negative integer, not 'x'")
        let number = #expect(throws: UsageError.self) {
            try parsed.number("--listen", in: 0.5...Double.infinity, command: "c")
        }
        #expect(number?.description == "c: --listen takes a number of at least 0.5, not 'x'")
    }
}
