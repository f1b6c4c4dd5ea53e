import MsgTrans
import MsgTransRuntime
import PulseClient
import PulseProtocol
import PulseTestSupport
import Testing

@Suite("Peers that answer with biz_type 0", .serialized)
struct RawPeerTests {
    @Test("responses carrying biz_type 0 are matched by message id and counted")
    func bizTypeZeroResponses() async throws {
        let peer = try RawPulsePeer()
        let clock = ManualClock()
        let session = makeSession(port: peer.port, clock: clock)
        let info = try await session.connect()
        #expect(info.connectionId == "raw-1")
        #expect(info.heartbeatInterval == .seconds(30))
        #expect(session.configRevision == 9)
        #expect(try await session.uploadEventBatch(encodedJSON: largeBatch()) == .accepted)
        #expect(await eventually { clock.sleeperDeadlines.contains(.seconds(30)) })
        clock.advance(to: .seconds(30))
        #expect(await eventually { session.configRevision == 10 })
        let requests = peer.requests
        #expect(requests.map(\.bizType) == [1, 5, 2])
        #expect(requests.map(\.compression) == [Compression.none, .zstd, .none])
        #expect(requests.map(\.messageID) == [1, 2, 3])
        #expect(session.statistics.snapshot().bizTypeMismatches == 3)
        #expect(session.statistics.snapshot().unmatchedResponses == 0)
        await session.close()
        peer.stop()
    }
}
