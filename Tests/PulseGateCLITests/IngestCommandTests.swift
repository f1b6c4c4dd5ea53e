import Foundation
import PulseIngest
import PulseProtocol
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseGateCLI

@Suite struct IngestCommandTests {
    @Test func defaults() throws {
        let options = try #require(try IngestCommand.parse(arguments: [], environment: [:]))
        #expect(options.listen == IngestListenAddress(host: "127.0.0.1", port: 6000))
        #expect(options.dataDirectory == "pulsegate-ingest")
        #expect(options.configPath == nil)
        #expect(options.admin == nil)
        #expect(options.connectDeadlineMilliseconds == nil)
        #expect(options.maxPartialFrameBytes == nil)
    }

    @Test func connectionLimitsFromFlagsAndEnvironment() throws {
        let environment = [
            "PULSEGATE_INGEST_CONNECT_DEADLINE_MS": "2500", "PULSEGATE_INGEST_MAX_PARTIAL_FRAME_BYTES": "1048576",
        ]
        let fromEnvironment = try #require(try IngestCommand.parse(arguments: [], environment: environment))
        #expect(fromEnvironment.connectDeadlineMilliseconds == 2500)
        #expect(fromEnvironment.maxPartialFrameBytes == 1_048_576)
        let flags = try #require(
            try IngestCommand.parse(
                arguments: ["--connect-deadline-ms", "700", "--max-partial-frame-bytes=4096"], environment: environment)
        )
        #expect(flags.connectDeadlineMilliseconds == 700)
        #expect(flags.maxPartialFrameBytes == 4096)
    }

    @Test func environmentAndFlags() throws {
        let environment = [
            "PULSEGATE_INGEST_LISTEN": "0.0.0.0:7000", "PULSEGATE_INGEST_DATA_DIR": "/var/lib/ingest",
            "PULSEGATE_INGEST_CONFIG": "/etc/ingest.json", "PULSEGATE_INGEST_ADMIN": "127.0.0.1:7001",
        ]
        let fromEnvironment = try #require(try IngestCommand.parse(arguments: [], environment: environment))
        #expect(fromEnvironment.listen == IngestListenAddress(host: "0.0.0.0", port: 7000))
        #expect(fromEnvironment.dataDirectory == "/var/lib/ingest")
        #expect(fromEnvironment.configPath == "/etc/ingest.json")
        #expect(fromEnvironment.admin == IngestListenAddress(host: "127.0.0.1", port: 7001))
        let flags = try #require(
            try IngestCommand.parse(
                arguments: [
                    "--listen", "[::1]:6100", "--data-dir=/tmp/d", "--admin", "127.0.0.1:0", "--config", "c.json",
                ],
                environment: environment))
        #expect(flags.listen == IngestListenAddress(host: "::1", port: 6100))
        #expect(flags.dataDirectory == "/tmp/d")
        #expect(flags.admin == IngestListenAddress(host: "127.0.0.1", port: 0))
        #expect(flags.configPath == "c.json")
    }

    @Test(arguments: [
        ["--listen"], ["--listen", "nowhere"], ["--bogus", "1"], ["serve"], ["--data-dir", ""],
        ["--connect-deadline-ms", "0"], ["--connect-deadline-ms", "soon"], ["--max-partial-frame-bytes", "-1"],
    ])
    func usageErrors(arguments: [String]) async {
        let captured = CapturedOutput()
        let status = await PulseGateCommandLine.run(
            arguments: ["ingest"] + arguments, environment: [:], output: captured.output)
        #expect(status == 2)
        #expect(captured.stderr.contains("ingest"))
    }

    @Test func helpDescribesFlagsAndEnvironment() async {
        let captured = CapturedOutput()
        let status = await PulseGateCommandLine.run(
            arguments: ["ingest", "--help"], environment: [:], output: captured.output)
        #expect(status == 0)
        for text in [
            "--listen", "--data-dir", "--config", "--admin", "PULSEGATE_INGEST_LISTEN", "SIGTERM",
            "--connect-deadline-ms", "--max-partial-frame-bytes",
        ] {
            #expect(captured.stdout.contains(text))
        }
    }

    @Test func unreadableConfigFailsAtStart() async {
        let captured = CapturedOutput()
        let status = await PulseGateCommandLine.run(
            arguments: ["ingest", "--config", "/nonexistent/ingest.json", "--listen", "127.0.0.1:0"], environment: [:],
            output: captured.output)
        #expect(status == 1)
        #expect(captured.stderr.contains("config"))
    }

    /// Runs the command on a free port, reloads on the reload signal, stops on terminate.
    @Test func runsUntilTerminated() async throws {
        let directory = try ScratchDirectory("ingest-cli").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/config.json"
        try #"{"apps":[{"appId":"a","packages":["*"],"policy":{"revision":1}}]}"#.write(
            toFile: config, atomically: true, encoding: .utf8)
        var options = IngestCommand.Options()
        options.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        options.admin = IngestListenAddress(host: "127.0.0.1", port: 0)
        options.dataDirectory = directory + "/data"
        options.configPath = config
        let (signals, continuation) = AsyncStream.makeStream(of: IngestCommand.Signal.self)
        let captured = CapturedOutput()
        let server = Mutex<IngestServer?>(nil)
        let run = Task {
            try await IngestCommand.run(options: options, output: captured.output, signals: signals) { started in
                server.withLock { $0 = started }
                try? #"{"apps":[{"appId":"a","packages":["*"],"policy":{"revision":1,"killSwitch":true}}]}"#.write(
                    toFile: config, atomically: true, encoding: .utf8)
                continuation.yield(.reload)
                continuation.yield(.terminate)
            }
        }
        try await run.value
        #expect(captured.stdout.contains("listening on 127.0.0.1:"))
        #expect(captured.stdout.contains("admin on http://127.0.0.1:"))
        #expect(captured.stdout.contains("new revisions for: a"))
        #expect(captured.stdout.contains("stopped"))
        #expect(server.withLock { $0?.policy.apps["a"]?.policy.revision } == 2)
        #expect(FileManager.default.fileExists(atPath: directory + "/data/ingest.sqlite"))
    }

    /// `--connect-deadline-ms` reaches the server: a connection that sends nothing is closed after
    /// it, long before the 10 s default.
    @Test func theConnectDeadlineFlagClosesSilentConnections() async throws {
        let directory = try ScratchDirectory("ingest-cli").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var options = try #require(
            try IngestCommand.parse(
                arguments: ["--listen", "127.0.0.1:0", "--data-dir", directory, "--connect-deadline-ms", "300"],
                environment: [:]))
        options.dataDirectory = directory
        let (signals, continuation) = AsyncStream.makeStream(of: IngestCommand.Signal.self)
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let captured = CapturedOutput()
        let run = Task {
            try await IngestCommand.run(options: options, output: captured.output, signals: signals) { started in
                portContinuation.yield(Int(started.port))
            }
        }
        defer { continuation.yield(.terminate) }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())
        let started = ContinuousClock.now
        let closedAfter = try await onThread {
            let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 8)
            _ = try connection.readUntilClosed()
            return ContinuousClock.now - started
        }
        #expect(closedAfter < .seconds(5))
        continuation.yield(.terminate)
        try await run.value
    }
}
