import PulseClient
import PulseKit
import PulseProtocol
import PulseTestSupport
import Synchronization
import Testing

/// A session against `127.0.0.1:port` with a manual clock and a generator that always draws the top
/// of the jitter range (so every backoff delay equals its cap and tests know where to advance).
func makeSession(
    port: Int, clock: ManualClock = ManualClock(), keepConnected: Bool = true, requestTimeout: Duration = .seconds(10),
    identity: ConnectRequest = testIdentity()
) -> PulseClientSession {
    var configuration = PulseClientConfiguration(host: "127.0.0.1", port: port, identity: identity)
    configuration.keepConnected = keepConnected
    configuration.requestTimeout = requestTimeout
    return PulseClientSession(configuration: configuration, clock: clock, random: RandomSource { .max })
}

/// A small event batch payload (the test server does not decode batches).
func smallBatch(_ id: String = "b1") -> [UInt8] {
    bytes(#"{"identity":{},"events":[],"batchId":"\#(id)"}"#)
}

/// A batch payload above the 1024-byte compression threshold.
func largeBatch(_ id: String = "big") -> [UInt8] {
    bytes(#"{"identity":{},"events":[],"batchId":"\#(id)","pad":""# + String(repeating: "x", count: 4000) + #""}"#)
}

/// A started ``TestPulseServer`` (its behaviour set by `configure`) and a ``makeSession(port:clock:keepConnected:requestTimeout:identity:)``
/// session to it on a manual clock. The test ends with ``TestPulseServer/stop(closing:)``.
func startServerSession(
    keepConnected: Bool = true, requestTimeout: Duration = .seconds(10),
    _ configure: (inout TestPulseServer.Behavior) -> Void = { _ in }
) async throws -> (server: TestPulseServer, session: PulseClientSession, clock: ManualClock) {
    let server = try await TestPulseServer.start()
    server.behavior.withLock { configure(&$0) }
    let clock = ManualClock()
    let session = makeSession(
        port: server.port, clock: clock, keepConnected: keepConnected, requestTimeout: requestTimeout)
    return (server, session, clock)
}

/// A server a test's session talks to: the ``TestPulseServer`` or the reference ingest.
protocol SessionPeer {
    func stop() async
}

extension SessionPeer {
    /// Closes the test's session, then stops the server.
    func stop(closing session: PulseClientSession) async {
        await session.close()
        await stop()
    }
}

extension TestPulseServer: SessionPeer {}

/// CONFIG_PULL from revision `older` gets the snapshot of `revision`; from `future`, 409.
func expectConfigPulls(_ session: PulseClientSession, older: Int64, future: Int64, revision: Int64) async throws {
    guard case .snapshot(let snapshot) = try await session.pullConfig(currentRevision: older) else {
        Issue.record("expected a snapshot")
        return
    }
    #expect(snapshot.revision == revision)
    guard case .rejected(let response) = try await session.pullConfig(currentRevision: future) else {
        Issue.record("expected 409")
        return
    }
    #expect(response.knownCode == .conflict)
}
