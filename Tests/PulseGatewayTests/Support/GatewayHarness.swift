import Foundation
import PulseKit
import PulseTestSupport
import Synchronization

@testable import PulseGateway

extension RandomSource {
    /// Draws the middle of every range: full jitter gives half the backoff ceiling.
    static let half = RandomSource { 1 << 63 }
}

/// A temporary data directory, removed by ``remove()``.
typealias TemporaryDirectory = ScratchDirectory

extension ScratchDirectory {
    init() throws {
        try self.init("gateway-tests")
    }
}

/// Collects log lines.
final class LogCollector: Sendable {
    private let lines = Mutex<[String]>([])

    var logger: GatewayLogger { GatewayLogger(level: .debug) { line in self.lines.withLock { $0.append(line) } } }

    var all: [String] { lines.withLock { $0 } }
}

/// Starts a real gateway (port 0, temp data directory) and talks HTTP to it.
struct GatewayHarness: Sendable {
    let directory: TemporaryDirectory
    let gateway: RunningGateway
    let clock: ManualClock
    let logs: LogCollector

    static func start(
        directory: TemporaryDirectory? = nil, policy: GatewayPolicy = GatewayPolicy(),
        maxBodyBytes: Int = 16 << 20, clock: ManualClock = ManualClock(),
        connector: (any UpstreamConnector)? = nil, forwarding: ForwardingSettings = ForwardingSettings(),
        random: RandomSource = .system, configure: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        let directory = try directory ?? TemporaryDirectory()
        let logs = LogCollector()
        // One manual clock drives wall and monotonic time; the forwarder sleeps on it.
        var environment = GatewayEnvironment(clock: clock.clock, random: random, logger: logs.logger)
        environment.connector = connector
        var configuration = GatewayConfiguration(
            dataDirectory: directory.path, listenPort: 0, policy: policy, maxBodyBytes: maxBodyBytes,
            shutdownGracePeriod: .seconds(2), forwarding: forwarding)
        configuration.policy.logLevel = .debug
        configure(&configuration)
        let gateway = try await GatewayApp.start(configuration, environment: environment)
        return GatewayHarness(directory: directory, gateway: gateway, clock: clock, logs: logs)
    }

    /// Sends one request on a fresh connection and reads the response.
    func request(
        _ method: String = "POST", _ path: String = "/v1/logs", body: [UInt8] = [],
        headers: [(String, String)] = [("Content-Type", "application/json"), ("Apsio-App-Id", "shop")]
    ) async throws -> RawHTTPResponse {
        try await RawHTTPConnection.exchange(
            port: gateway.httpPort, method: method, target: path, headers: headers, body: body)
    }

    /// POSTs an OTLP JSON body with an app id and an optional batch id.
    func post(
        _ json: String, path: String = "/v1/logs", batchID: String? = nil, app: String = "shop",
        extraHeaders: [(String, String)] = []
    ) async throws -> RawHTTPResponse {
        var headers = [("Content-Type", "application/json"), ("Apsio-App-Id", app)]
        if let batchID { headers.append(("Apsio-Batch-Id", batchID)) }
        return try await request("POST", path, body: Array(json.utf8), headers: headers + extraHeaders)
    }

    /// Pokes the forwarder and waits until its scheduler has rescanned the outbox since and sends
    /// nothing (the rows left are not due on the manual clock): "nothing goes out yet" without
    /// waiting in real time.
    func forwarderSettles() async -> Bool {
        guard let forwarder = gateway.forwarder else { return false }
        let poke = forwarder.poke()
        return await eventually { forwarder.settledPokes >= poke }
    }

    func stop(removing: Bool = true) async {
        await gateway.shutdown()
        if removing { directory.remove() }
    }
}
