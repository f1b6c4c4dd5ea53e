import Foundation
import PulseGateway
import PulseIngest
import PulseKit
import PulseTestSupport
import Testing

@testable import PulseGateCLI

@Suite struct GatewayCommandTests {
    @Test func serveHelpAndUsageErrors() async {
        let (status, captured) = await run(["serve", "--help"])
        #expect(status == 0)
        #expect(captured.stdout.contains("PULSEGATE_UPSTREAM"))
        let (unknown, unknownOutput) = await run(["serve", "--port", "1"])
        #expect(unknown == 2)
        #expect(unknownOutput.stderr.contains("unknown option '--port'"))
        let (badUpstream, badOutput) = await run(["serve", "--upstream", "nowhere"])
        #expect(badUpstream == 2)
        #expect(badOutput.stderr.contains("is not HOST:PORT"))
        let (missing, _) = await run(["serve", "--listen"])
        #expect(missing == 2)
    }

    @Test func serveAdminIsLoopbackOnlyAndOnlyWithTheEmbeddedUpstream() async throws {
        let (open, openOutput) = await run(["serve", "--admin", "0.0.0.0:4319"])
        #expect(open == 2)
        #expect(openOutput.stderr.contains("--admin must be a loopback address"))
        let (upstream, upstreamOutput) = await run([
            "serve", "--admin", "127.0.0.1:4319", "--upstream", "127.0.0.1:7000",
        ])
        #expect(upstream == 2)
        #expect(upstreamOutput.stderr.contains("cannot be used with --upstream"))
        for (text, host) in [("127.0.0.1:4319", "127.0.0.1"), ("[::1]:0", "::1")] {
            let options = try #require(try ServeCommand.parse(["--admin", text], environment: [:]))
            let admin = try ServeCommand.embeddedAdmin(options, configuration: try ServeCommand.configuration(options))
            #expect(admin?.host == host)
        }
        let fromEnvironment = try #require(try ServeCommand.parse([], environment: ["PULSEGATE_ADMIN": "127.0.0.1:9"]))
        #expect(fromEnvironment.admin == "127.0.0.1:9")
    }

    @Test func flagsWinOverEnvironmentOverConfigFile() throws {
        let directory = try ScratchDirectory("cli-tests").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/gateway.json"
        try Data(
            #"{"listen":"127.0.0.1:9000","upstream":"127.0.0.1:7000","dataDir":"/from/file","defaultAppId":"shop","outboxMaxBatches":10,"forwarding":{"maxInFlight":3}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: config))
        let fromFile = try #require(try ServeCommand.parse(["--config", config], environment: [:]))
        let fileConfiguration = try ServeCommand.configuration(fromFile)
        #expect(fileConfiguration.listenPort == 9000)
        #expect(fileConfiguration.upstream == UpstreamAddress(host: "127.0.0.1", port: 7000))
        #expect(fileConfiguration.dataDirectory == "/from/file")
        #expect(fileConfiguration.policy.defaultAppID == "shop")
        #expect(fileConfiguration.policy.outboxMaxBatches == 10)
        #expect(fileConfiguration.forwarding.maxInFlight == 3)
        let environment = [
            "PULSEGATE_LISTEN": "0.0.0.0:9100", "PULSEGATE_CONFIG": config, "PULSEGATE_DATA_DIR": "/env",
        ]
        let mixed = try #require(try ServeCommand.parse(["--listen=[::1]:9200"], environment: environment))
        let resolved = try ServeCommand.configuration(mixed)
        #expect(resolved.listenHost == "::1")
        #expect(resolved.listenPort == 9200)
        #expect(resolved.dataDirectory == "/env")
        #expect(resolved.upstream?.port == 7000)
        let defaults = try ServeCommand.configuration(try #require(try ServeCommand.parse([], environment: [:])))
        #expect(defaults.listenHost == "127.0.0.1")
        #expect(defaults.listenPort == 4318)
        #expect(defaults.upstream == nil)
    }

    @Test func theStoreComesFromTheFlagTheEnvironmentOrTheConfigFileAndDefaultsToSQLite() throws {
        let directory = try ScratchDirectory("cli-tests").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/gateway.json"
        try Data(
            #"{"store":"postgres://file/db","storeLeaseMs":3000,"forwarding":{"rescanIntervalMs":700}}"#.utf8
        ).write(to: URL(fileURLWithPath: config))
        let fromFile = try ServeCommand.configuration(
            try #require(try ServeCommand.parse(["--config", config], environment: [:])))
        #expect(fromFile.store == "postgres://file/db")
        #expect(fromFile.storeLease == .milliseconds(3000))
        #expect(fromFile.forwarding.rescanInterval == .milliseconds(700))
        let environment = ["PULSEGATE_STORE": "postgres://env/db", "PULSEGATE_CONFIG": config]
        let fromEnvironment = try ServeCommand.configuration(
            try #require(try ServeCommand.parse([], environment: environment)))
        #expect(fromEnvironment.store == "postgres://env/db")
        let fromFlag = try ServeCommand.configuration(
            try #require(try ServeCommand.parse(["--store=postgres://flag/db"], environment: environment)))
        #expect(fromFlag.store == "postgres://flag/db")
        let sqlite = try ServeCommand.configuration(try #require(try ServeCommand.parse([], environment: [:])))
        #expect(sqlite.store == nil)
        try Data(#"{"storeLeaseMs":10}"#.utf8).write(to: URL(fileURLWithPath: config))
        #expect(throws: CLIError.self) {
            try ServeCommand.configuration(
                try #require(try ServeCommand.parse(["--config", config], environment: [:])))
        }
    }

    @Test func configFileTyposAreErrors() throws {
        let directory = try ScratchDirectory("cli-tests").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/bad.json"
        try Data(#"{"outboxMaxBatch":10}"#.utf8).write(to: URL(fileURLWithPath: config))
        let options = try #require(try ServeCommand.parse(["--config", config], environment: [:]))
        let error = #expect(throws: CLIError.self) { try ServeCommand.configuration(options) }
        #expect(error?.message.contains("outboxMaxBatch: unknown config key") == true)
    }

    @Test func outboxStatusDeadLettersAndRequeue() async throws {
        let directory = try ScratchDirectory("cli-tests").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (missing, missingOutput) = await run(["outbox", "--data-dir", directory])
        #expect(missing == 1)
        #expect(missingOutput.stderr.contains("no gateway database"))
        // A real gateway stores one batch.
        let gateway = try await GatewayApp.start(GatewayConfiguration(dataDirectory: directory, listenPort: 0))
        let port = gateway.httpPort
        let body =
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"device.id","value":{"stringValue":"d"}},{"key":"telemetry.sdk.name","value":{"stringValue":"kit"}},{"key":"os.name","value":{"stringValue":"Android"}}]},"scopeLogs":[{"logRecords":[{"timeUnixNano":"1"}]}]}]}"#
        #expect(try await GatewayHTTP.post(port: port, body).status == 200)
        await gateway.shutdown()
        let (statusCode, statusOutput) = await run(["outbox", "--data-dir", directory])
        #expect(statusCode == 0)
        #expect(statusOutput.stdout.hasPrefix("APP   BATCHES  RECORDS  BYTES"))
        #expect(statusOutput.stdout.contains("\nshop  1        1  "))
        let (lettersCode, letters) = await run(["outbox", "dead-letters", "--data-dir", directory])
        #expect(lettersCode == 0)
        #expect(letters.stdout == "no dead letters\n")
        let (requeueCode, requeued) = await run(["outbox", "requeue", "--all", "--data-dir", directory])
        #expect(requeueCode == 0)
        #expect(requeued.stdout == "requeued 0 batches\n")
        let (usage, usageOutput) = await run(["outbox", "requeue", "--data-dir", directory])
        #expect(usage == 2)
        #expect(usageOutput.stderr.contains("--all or sequence numbers"))
    }
}
