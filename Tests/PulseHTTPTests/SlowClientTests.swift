import Glibc
import PulseHTTP
import PulseTestSupport
import Synchronization
import Testing

/// Slowloris: clients that keep a connection busy by dribbling bytes, each one just often enough to
/// defeat the idle timeout, must be closed by the read deadlines, and must not lock out a normal
/// client even when they hold every connection slot.
@Suite struct SlowClientTests {
    /// Short deadlines, a long idle timeout (so only the deadlines can close the dribblers) and fewer
    /// connection slots than slow clients.
    static let configuration = HTTPServerConfiguration(
        host: "127.0.0.1", port: 0, connectionLimit: 200, idleTimeout: .seconds(60),
        headerTimeout: .seconds(1), bodyTimeout: .seconds(1), minBodyBytesPerSecond: 100)

    /// Keeps sending one byte to every open connection every 200 ms on its own thread, until stopped;
    /// records which connections the server closed.
    final class Dribbler: Sendable {
        private let connections: [RawHTTPConnection]
        private let state = Mutex<(stopped: Bool, closed: Set<Int>)>((false, []))

        init(_ connections: [RawHTTPConnection]) { self.connections = connections }

        var closedCount: Int { state.withLock { $0.closed.count } }

        func stop() { state.withLock { $0.stopped = true } }

        func run() async throws {
            try await onThread {
                while !self.state.withLock({ $0.stopped }) {
                    for (index, connection) in self.connections.enumerated()
                    where !self.state.withLock({ $0.closed.contains(index) }) {
                        // The server closes without a response: anything readable means end of stream.
                        var isClosed = !connection.nothingPending()
                        if !isClosed {
                            do { try connection.send("a") } catch { isClosed = true }
                        }
                        if isClosed { _ = self.state.withLock { $0.closed.insert(index) } }
                    }
                    // A sleep: the slow peer dribbles a byte every 200 ms (the behaviour under test).
                    usleep(200_000)
                }
            }
        }
    }

    @Test func slowClientsAreClosedAndANormalClientIsServed() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in HTTPResponse(status: .ok) }
        try await withServer(Self.configuration, handler: handler) { _, port in
            // 250 slow clients for 200 slots: half never finish their headers, half declare a body
            // and send it a byte at a time.
            let slow = try await onThread { () -> [RawHTTPConnection] in
                try (0..<250).map { index in
                    let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
                    if index.isMultiple(of: 2) {
                        try connection.send("POST /slow HTTP/1.1\r\nHost: localhost\r\nX-Slow: ")
                    } else {
                        try connection.send("POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n")
                    }
                    return connection
                }
            }
            let dribbler = Dribbler(slow)
            let dribbling = Task { try await dribbler.run() }
            defer { dribbler.stop() }

            let clock = ContinuousClock()
            let start = clock.now
            let response = try await RawHTTPConnection.exchange(
                port: port, target: "/normal", receiveTimeoutSeconds: 30)
            #expect(response.status == 200)
            // The slots free up after the 1 s deadlines; generous for a loaded machine, far below
            // the 60 s idle timeout that alone would have applied.
            #expect(clock.now - start < .seconds(20))

            // Every slow client is closed, including those that waited in the backlog.
            let slowCount = slow.count
            _ = await eventually(within: .seconds(30)) { dribbler.closedCount >= slowCount }
            #expect(dribbler.closedCount == slow.count)
            dribbler.stop()
            try await dribbling.value
        }
    }

    @Test func bodyAboveTheMinimumRateIsAccepted() async throws {
        // 3,000 bytes at about 1,000 bytes/s take 3 s, past the 1 s body timeout, but the rate keeps
        // extending it (1 s per 100 bytes).
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            HTTPResponse(status: .ok, body: Array(String(request.body.count).utf8))
        }
        try await withServer(Self.configuration, handler: handler) { _, port in
            let response = try await onThread {
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
                try connection.send("POST /steady HTTP/1.1\r\nHost: localhost\r\nContent-Length: 3000\r\n\r\n")
                for _ in 0..<30 {
                    try connection.send([UInt8](repeating: 0x61, count: 100))
                    // A sleep: a steady, slow (but not too slow) peer is the behaviour under test.
                    usleep(100_000)
                }
                return try connection.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.bodyText == "3000")
        }
    }

    @Test func keptAliveConnectionWaitsTheIdleTimeoutNotTheHeaderTimeout() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in HTTPResponse(status: .ok) }
        try await withServer(Self.configuration, handler: handler) { _, port in
            let (first, second) = try await onThread {
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
                try connection.sendRequest(target: "/first")
                let first = try connection.readResponse()
                // A sleep: real idle time on a real socket is the behaviour under test.
                usleep(2_500_000)  // Longer than the header timeout, shorter than the idle timeout.
                try connection.sendRequest(target: "/second")
                return (first, try connection.readResponse())
            }
            #expect(first.status == 200)
            #expect(second.status == 200)
        }
    }
}
