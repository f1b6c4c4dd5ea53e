import Foundation
import PulseIngest
import Synchronization
import Testing

@testable import PulseGateCLI

@Suite struct IngestCommandTests {
    @Test func defaults() throws {
        let options = try IngestCommand.parse(arguments: [], environment: [:])
        #expect(options.listen == IngestListenAddress(host: "127.0.0.1", port: 6000))
        #expect(options.dataDirectory == "pulsegate-ingest")
        #expect(options.configPath == nil)
        #expect(options.admin == nil)
    }

    @Test func environmentAndFlags() throws {
        let environment = [
            "PULSEGATE_INGEST_LISTEN": "0.0.0.0:7000", "PULSEGATE_INGEST_DATA_DIR": "/var/lib/ingest",
            "PULSEGATE_INGEST_CONFIG": "/etc/ingest.json", "PULSEGATE_INGEST_ADMIN": "127.0.0.1:7001",
        ]
        let fromEnvironment = try IngestCommand.parse(arguments: [], environment: environment)
        #expect(fromEnvironment.listen == IngestListenAddress(host: "0.0.0.0", port: 7000))
        #expect(fromEnvironment.dataDirectory == "/var/lib/ingest")
        #expect(fromEnvironment.configPath == "/etc/ingest.json")
        #expect(fromEnvironment.admin == IngestListenAddress(host: "127.0.0.1", port: 7001))
        let flags = try IngestCommand.parse(
            arguments: ["--listen", "[::1]:6100", "--data-dir=/tmp/d", "--admin", "127.0.0.1:0", "--config", "c.json"],
            environment: environment)
        #expect(flags.listen == IngestListenAddress(host: "::1", port: 6100))
        #expect(flags.dataDirectory == "/tmp/d")
        #expect(flags.admin == IngestListenAddress(host: "127.0.0.1", port: 0))
        #expect(flags.configPath == "c.json")
    }

    @Test(arguments: [["--listen"], ["--listen", "nowhere"], ["--bogus", "1"], ["serve"], ["--data-dir", ""]])
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
        for text in ["--listen", "--data-dir", "--config", "--admin", "PULSEGATE_INGEST_LISTEN", "SIGTERM"] {
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
        let directory = NSTemporaryDirectory() + "pulse-ingest-cli-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
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
}
