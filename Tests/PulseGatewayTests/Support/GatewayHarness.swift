import Foundation
import PulseTestSupport
import Synchronization

@testable import PulseGateway

/// A clock tests move by hand.
final class TestClock: Sendable {
    private let value: Mutex<Int64>

    init(_ start: Int64 = 1_700_000_000_000) {
        value = Mutex(start)
    }

    var now: Int64 { value.withLock { $0 } }

    /// Moves the clock; a negative amount steps it back.
    func advance(by milliseconds: Int64) {
        value.withLock { $0 += milliseconds }
    }

    var gatewayClock: GatewayClock { GatewayClock { self.now } }
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
    let clock: TestClock
    let logs: LogCollector

    static func start(
        directory: TemporaryDirectory? = nil, policy: GatewayPolicy = GatewayPolicy(),
        maxBodyBytes: Int = 16 << 20, clock: TestClock = TestClock(), monotonicClock: TestClock? = nil,
        connector: (any UpstreamConnector)? = nil, forwarding: ForwardingSettings = ForwardingSettings(),
        random: GatewayRandom = .system, configure: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws -> GatewayHarness {
        let directory = try directory ?? TemporaryDirectory()
        let logs = LogCollector()
        // One test clock drives both wall and monotonic time unless a test separates them.
        var environment = GatewayEnvironment(
            clock: clock.gatewayClock, monotonicClock: (monotonicClock ?? clock).gatewayClock, random: random,
            logger: logs.logger)
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

    func stop(removing: Bool = true) async {
        await gateway.shutdown()
        if removing { directory.remove() }
    }
}
