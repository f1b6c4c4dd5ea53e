import Foundation
import PulseGateway
import PulseHashing
import PulseIngest
import PulseTestSupport
import Synchronization
import Testing

/// Writes `text` (a config file) to `path`, replacing it.
func writeFile(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// The reference ingest server running in the test process: the upstream a gateway under test
/// forwards to. It outlives gateway restarts (and `kill -9` of a gateway process), and can itself
/// be stopped and started again on the same port and data directory (an upstream outage).
final class IngestFixture: Sendable {
    let directory: String
    let port: Int
    private let server: Mutex<IngestServer?>
    private let configuration: IngestConfiguration

    private init(directory: String, port: Int, server: IngestServer, configuration: IngestConfiguration) {
        self.directory = directory
        self.port = port
        self.server = Mutex(server)
        self.configuration = configuration
    }

    static func start(directory: String, policy: IngestPolicy = .acceptingEveryApp) async throws -> IngestFixture {
        var configuration = IngestConfiguration(dataDirectory: directory, policy: policy)
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        let server = try await IngestServer.start(configuration)
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: server.port)
        return IngestFixture(directory: directory, port: server.port, server: server, configuration: configuration)
    }

    /// The running server.
    var current: IngestServer {
        get throws {
            guard let server = server.withLock({ $0 }) else { throw TestClientError("the ingest server is stopped") }
            return server
        }
    }

    /// The gateway address of this upstream.
    var address: UpstreamAddress { UpstreamAddress(host: "127.0.0.1", port: port) }

    /// Shuts the server down (an outage).
    func stop() async {
        let running = server.withLock { server -> IngestServer? in
            defer { server = nil }
            return server
        }
        await running?.shutdown()
    }

    /// Starts it again on the same port and data directory, with the policy in force before.
    func restart() async throws {
        var configuration = self.configuration
        if let policy = try? current.policy { configuration.policy = policy }
        let started = try await IngestServer.start(configuration)
        server.withLock { $0 = started }
    }

    /// Every stored event of `app`.
    func events(app: String) async throws -> [IngestedEvent] {
        try await current.events(app: app, limit: 1_000_000)
    }

    /// The ids of every stored event of `app`.
    func eventIDs(app: String) async throws -> [String] {
        try await events(app: app).map(\.eventId)
    }
}

/// Requests to a gateway over loopback, each on a fresh connection.
enum GatewayHTTP {
    static let jsonType = ("Content-Type", "application/json")

    static func request(
        port: Int, _ method: String = "POST", _ path: String = "/v1/logs", body: [UInt8] = [],
        headers: [(String, String)]
    ) async throws -> RawHTTPResponse {
        try await RawHTTPConnection.exchange(
            port: port, method: method, target: path, headers: headers, body: body, receiveTimeoutSeconds: 30)
    }

    /// POSTs OTLP/JSON for `app` with an optional batch id.
    static func post(
        port: Int, _ json: String, path: String = "/v1/logs", app: String? = "shop", batchID: String? = nil,
        headers extra: [(String, String)] = []
    ) async throws -> RawHTTPResponse {
        var headers = [jsonType]
        if let app { headers.append(("Apsio-App-Id", app)) }
        if let batchID { headers.append(("Apsio-Batch-Id", batchID)) }
        return try await request(port: port, "POST", path, body: Array(json.utf8), headers: headers + extra)
    }

    /// The value of a Prometheus sample on `/metrics`, such as `pulsegate_outbox_batches` or
    /// `pulsegate_app_outbox_batches{app="shop"}` (the series exactly as rendered).
    static func metric(port: Int, _ name: String) async throws -> Double? {
        let response = try await request(port: port, "GET", "/metrics", headers: [])
        for line in response.bodyText.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }
}

/// OTLP/JSON bodies for gateway tests.
enum Payload {
    static func string(_ key: String, _ value: String) -> String {
        #"{"key":"\#(key)","value":{"stringValue":"\#(value)"}}"#
    }

    static func int(_ key: String, _ value: Int) -> String {
        #"{"key":"\#(key)","value":{"intValue":"\#(value)"}}"#
    }

    /// The resource attributes of an iOS app install (see docs/mapping.md for what each becomes).
    static func iosResource(device: String = "dev-1", installation: String = "inst-1") -> [String] {
        [
            string("device.id", device), string("app.installation.id", installation),
            string("service.version", "2.4.1"), int("apsio.app.build_number", 241), string("user.id", "user-9"),
            string("telemetry.sdk.name", "pulsekit"), string("telemetry.sdk.version", "2.3.0"),
            string("os.name", "iOS"), string("os.type", "darwin"), string("apsio.app.package_name", "com.example.shop"),
            string("device.model.identifier", "iPhone15,2"),
        ]
    }

    static func logs(resource: [String] = iosResource(), scope: String = "ShopKit", records: [String]) -> String {
        #"{"resourceLogs":[{"resource":{"attributes":[\#(resource.joined(separator: ","))]},"scopeLogs":[{"scope":{"name":"\#(scope)"},"logRecords":[\#(records.joined(separator: ","))]}]}]}"#
    }

    static func spans(resource: [String] = iosResource(), spans: [String]) -> String {
        #"{"resourceSpans":[{"resource":{"attributes":[\#(resource.joined(separator: ","))]},"scopeSpans":[{"scope":{"name":"net"},"spans":[\#(spans.joined(separator: ","))]}]}]}"#
    }

    static func metrics(resource: [String] = iosResource(), metrics: [String]) -> String {
        #"{"resourceMetrics":[{"resource":{"attributes":[\#(resource.joined(separator: ","))]},"scopeMetrics":[{"scope":{"name":"perf"},"metrics":[\#(metrics.joined(separator: ","))]}]}]}"#
    }

    static func record(_ seconds: Int, attributes: [String] = [], extra: String = "") -> String {
        #"{"timeUnixNano":"\#(seconds)000000000","attributes":[\#(attributes.joined(separator: ","))]\#(extra)}"#
    }

    /// A log record whose event id is `uid` (`log.record.uid`).
    static func uidRecord(_ uid: String, seconds: Int = 1_700_000_000) -> String {
        record(seconds, attributes: [string("log.record.uid", uid)], extra: #","body":{"stringValue":"hello"}"#)
    }

    /// SHA-256 hex of length-prefixed fields (docs/mapping.md), computed here independently of
    /// the gateway's `SHA256.updateField`.
    static func fieldHash(_ fields: [String]) -> String {
        SHA256.hexDigest(lengthPrefixedFields(fields))
    }
}

/// `pulsegate serve` as a child process, its standard error collected. The listen port is read
/// from its "gateway listening" log line (it listens on port 0).
///
/// With a `launcher` (a command such as `faketime -f -1h` that starts the gateway as its own child
/// and does not pass signals on), ``process`` is the launcher and signals go to the gateway itself
/// (``servePID``).
final class GatewayProcess {
    let process: Process
    let port: Int
    let logs: ChildOutputLines
    /// The `pulsegate serve` process: ``process`` itself, or the launcher's child.
    let servePID: pid_t

    private init(process: Process, port: Int, logs: ChildOutputLines, servePID: pid_t) {
        self.process = process
        self.port = port
        self.logs = logs
        self.servePID = servePID
    }

    static func start(
        executable: String, dataDirectory: String, upstream: UpstreamAddress, config: String? = nil,
        launcher: [String] = [], environment: [String: String] = [:], extraArguments: [String] = []
    ) async throws -> GatewayProcess {
        let process = Process()
        let arguments =
            [
                "serve", "--listen", "127.0.0.1:0", "--upstream", upstream.description, "--data-dir", dataDirectory,
            ] + (config.map { ["--config", $0] } ?? []) + extraArguments
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = Array(launcher.dropFirst()) + [executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let logs = ChildOutputLines(errors.fileHandleForReading)
        // Until the "gateway listening" line appears, or the child exited and closed its stderr.
        _ = await eventually(within: .seconds(60)) {
            logs.all.contains { Self.listenPort($0) != nil } || (!process.isRunning && logs.isFinished)
        }
        if let port = logs.all.lazy.compactMap(Self.listenPort).first {
            let launched = launcher.isEmpty ? nil : Self.child(of: process.processIdentifier)
            return GatewayProcess(
                process: process, port: port, logs: logs, servePID: launched ?? process.processIdentifier)
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        await waitForChildExit(process)
        throw TestClientError("pulsegate serve did not start: \(logs.all.joined(separator: " | "))")
    }

    /// The first child of `pid` (`/proc/PID/task/PID/children`).
    private static func child(of pid: pid_t) -> pid_t? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else {
            return nil
        }
        return text.split(separator: " ").first.flatMap { pid_t($0) }
    }

    /// The port of a `gateway listening` line (`"listen":"127.0.0.1:PORT"`).
    static func listenPort(_ line: String) -> Int? {
        guard line.contains(#""msg":"gateway listening""#), let start = line.range(of: #""listen":""#) else {
            return nil
        }
        let rest = line[start.upperBound...]
        guard let end = rest.firstIndex(of: "\""), let colon = rest[..<end].lastIndex(of: ":") else { return nil }
        return Int(rest[rest.index(after: colon)..<end])
    }

    /// `kill -9`, then waits for the exit.
    func killHard() async {
        kill(servePID, SIGKILL)
        await waitForChildExit(process)
    }

    /// SIGTERM (graceful drain), then waits for the exit; SIGKILL after `seconds`.
    func terminate(seconds: Double = 20) async {
        kill(servePID, SIGTERM)
        let process = process
        _ = await eventually(within: .milliseconds(Int(seconds * 1000))) { !process.isRunning }
        if process.isRunning {
            kill(servePID, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
        }
        await waitForChildExit(process)
    }
}

/// Runs `body` with the built `pulsegate` executable (failing the test when it has not been built)
/// and a fresh scratch directory named after `label`, removed when `body` returns or throws.
func withPulsegate(
    _ label: String, _ body: (_ executable: String, _ root: ScratchDirectory) async throws -> Void
) async throws {
    let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
    let root = try ScratchDirectory(label)
    defer { root.remove() }
    try await body(executable, root)
}
