import MsgTransRuntime
import PulseClient
import PulseKit
import PulseProtocol
import PulseTestSupport
import Synchronization
import Testing

@Suite("Reconnection", .serialized)
struct ReconnectTests {
    @Test("a connection dropped by the server is re-established in the background after the jittered delay")
    func backgroundReconnect() async throws {
        let (server, session, clock) = try await startServerSession()
        try await session.connect()
        await server.dropConnections()
        #expect(await eventually { !session.isConnected })
        // Constant top-of-range jitter: the first reconnect waits exactly the 1 s cap.
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(1)) })
        #expect(server.log.withLock { $0.connects.count } == 1)
        clock.advance(to: .seconds(1))
        #expect(await eventually { session.sessionInfo?.connectionId == "conn-2" })
        #expect(try await session.uploadEventBatch(encodedJSON: smallBatch()) == .accepted)
        #expect(server.log.withLock { $0.uploads.map(\.connectionId) } == ["conn-2"])
        await server.stop(closing: session)
    }

    @Test("without keepConnected the next request waits out the backoff and reconnects")
    func onDemandReconnect() async throws {
        let (server, session, clock) = try await startServerSession(keepConnected: false)
        try await session.connect()
        await server.dropConnections()
        #expect(await eventually { !session.isConnected })
        let upload = Task { await clientError { try await session.uploadEventBatch(encodedJSON: smallBatch()) } }
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(1)) })
        clock.advance(to: .seconds(1))
        #expect(await upload.value == nil)
        #expect(server.log.withLock { $0.connectionIds } == ["conn-1", "conn-2"])
        await server.stop(closing: session)
    }

    @Test("a rejected CONNECT fails with its code; a request inside the backoff fails with retryAfter")
    func rejectedConnectBacksOff() async throws {
        let (server, session, clock) = try await startServerSession(keepConnected: false) {
            $0.connectCode = .forbidden
        }
        let rejected = await clientError { try await session.connect() }
        #expect(rejected?.code == .connectRejected)
        #expect(rejected?.responseCode == 403)
        let early = await clientError {
            try await session.uploadEventBatch(encodedJSON: smallBatch(), timeout: .milliseconds(500))
        }
        #expect(early?.code == .backingOff)
        #expect(early?.retryAfter == .seconds(1))
        server.behavior.withLock { $0.connectCode = .ok }
        clock.advance(to: .seconds(1))
        #expect(try await session.uploadEventBatch(encodedJSON: smallBatch()) == .accepted)
        #expect(server.log.withLock { $0.connects.count } == 2)
        await server.stop(closing: session)
    }

    @Test("nothing listening: connectFailed, and backoff doubles between background attempts")
    func connectFailedBackoff() async throws {
        // Take a free port, then stop listening on it.
        let probe = try await TestPulseServer.start()
        let port = probe.port
        await probe.stop()
        let clock = ManualClock()
        let session = makeSession(port: port, clock: clock)
        let failed = await clientError { try await session.connect() }
        #expect(failed?.code == .connectFailed)
        #expect(await eventually { clock.sleeperDeadlines == [.seconds(1)] })
        clock.advance(to: .seconds(1))
        #expect(await eventually { clock.sleeperDeadlines == [.seconds(3)] })
        clock.advance(to: .seconds(3))
        #expect(await eventually { clock.sleeperDeadlines == [.seconds(7)] })
        #expect(session.statistics.snapshot().acceptedConnections == 0)
        await session.close()
        #expect(clock.sleeperDeadlines.isEmpty)
    }

    @Test("close wakes a request waiting out the backoff")
    func closeDuringBackoff() async throws {
        let (server, session, clock) = try await startServerSession(keepConnected: false) {
            $0.connectCode = .unavailable
        }
        #expect(await clientError { try await session.connect() }?.code == .connectRejected)
        let waiting = Task {
            await clientError { try await session.uploadEventBatch(encodedJSON: smallBatch(), timeout: .seconds(3600)) }
        }
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(1)) })
        await session.close()
        #expect(await waiting.value?.code == .sessionClosed)
        await server.stop()
    }

    @Test("a heartbeat rejected with 403 makes the session register again at once")
    func rejectedHeartbeat() async throws {
        let (server, session, clock) = try await startServerSession {
            $0.heartbeatIntervalMs = 30_000
            $0.heartbeatCodes = [.forbidden]
        }
        try await session.connect()
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(30)) })
        clock.advance(to: .seconds(30))
        #expect(await eventually { session.sessionInfo?.connectionId == "conn-2" })
        #expect(server.log.withLock { $0.heartbeats.count } == 1)
        await server.stop(closing: session)
    }

    @Test("a heartbeat that times out abandons the connection and reconnects after the backoff")
    func unresponsiveHeartbeat() async throws {
        let server = try await TestPulseServer.start()
        server.behavior.withLock {
            $0.heartbeatIntervalMs = 15_000
            $0.hang = [.clientHeartbeat]
        }
        let clock = ManualClock()
        let session = makeSession(port: server.port, clock: clock, requestTimeout: .milliseconds(300))
        try await session.connect()
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(15)) })
        clock.advance(to: .seconds(15))
        #expect(await eventually { !session.isConnected })
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(16)) })
        server.behavior.withLock { $0.hang = [] }
        clock.advance(to: .seconds(16))
        #expect(await eventually { session.sessionInfo?.connectionId == "conn-2" })
        await server.stop(closing: session)
    }
}
