import PulseClient
import PulseJSON
import PulseKit
import PulseProtocol
import Synchronization
import Testing

@Suite("Inbound control RPC from the server", .serialized)
struct ControlRPCTests {
    /// A connected session whose telemetry.flush handler answers null.
    static func connectedWithFlushHandler() async throws -> (TestPulseServer, PulseClientSession) {
        let (server, session, _) = try await startServerSession()
        session.setControlHandler(.telemetryFlush) { _ in .null }
        try await session.connect()
        return (server, session)
    }

    @Test("telemetry.flush runs its handler, which uploads on the same connection before answering")
    func flushWithReverseRequest() async throws {
        let (server, session, _) = try await startServerSession()
        session.setControlHandler(.telemetryFlush) { request in
            #expect(request.route.name == "telemetry.flush")
            // A request back to the server from inside the handler: must not deadlock.
            let outcome = try await session.uploadEventBatch(encodedJSON: smallBatch("flushed"))
            return .object([JSONMember(key: "flushed", value: .int(outcome.isAccepted ? 1 : 0))])
        }
        try await session.connect()
        let envelope = try await server.sendControl(route: "telemetry.flush")
        #expect(envelope.code == 0)
        #expect(envelope.data?.value == .object([JSONMember(key: "flushed", value: .int(1))]))
        let log = server.log.withLock { $0 }
        #expect(log.uploads.map(\.payload) == [smallBatch("flushed")])
        #expect(log.uploads.first?.connectionId == "conn-1")
        #expect(log.connects.count == 1)
        await server.stop(closing: session)
    }

    @Test("config.invalidate receives its arguments")
    func invalidateWithArguments() async throws {
        let (server, session, _) = try await startServerSession()
        let received = Mutex<[JSONMember]>([])
        session.setControlHandler(.configInvalidate) { request in
            received.withLock { $0 = request.args }
            return .bool(true)
        }
        try await session.connect()
        let envelope = try await server.sendControl(
            route: "config.invalidate", args: [JSONMember(key: "revision", value: .int(12))])
        #expect(envelope.code == 0)
        #expect(envelope.data?.value == .bool(true))
        #expect(received.withLock { $0 } == [JSONMember(key: "revision", value: .int(12))])
        await server.stop(closing: session)
    }

    @Test("unknown routes and allowlisted routes without a handler get 404; the connection stays")
    func unknownRoutes() async throws {
        let (server, session) = try await Self.connectedWithFlushHandler()
        #expect(try await server.sendControl(route: "audit.dump_everything").code == 404)
        #expect(try await server.sendControl(route: "system.exec").code == 404)
        #expect(try await server.sendControl(route: "config.invalidate").code == 404)
        session.setControlHandler(.telemetryFlush, nil)
        #expect(try await server.sendControl(route: "telemetry.flush").code == 404)
        #expect(session.isConnected)
        #expect(try await session.uploadEventBatch(encodedJSON: smallBatch()) == .accepted)
        #expect(server.log.withLock { $0.connects.count } == 1)
        await server.stop(closing: session)
    }

    @Test("malformed control requests get 400")
    func malformed() async throws {
        let (server, session) = try await Self.connectedWithFlushHandler()
        #expect(try await server.sendControl(bytes("not json")).code == 400)
        #expect(try await server.sendControl(bytes(#"{"args":{}}"#)).code == 400)
        #expect(try await server.sendControl(bytes(#"{"route":"Telemetry Flush","args":{}}"#)).code == 400)
        #expect(try await server.sendControl(bytes(#"[1,2,3]"#)).code == 400)
        #expect(session.isConnected)
        await server.stop(closing: session)
    }

    @Test("a failing handler answers with its chosen code or 500")
    func failingHandlers() async throws {
        let (server, session, _) = try await startServerSession()
        session.setControlHandler(.configInvalidate) { _ in
            throw PulseClientError(
                .controlFailed, "bad revision argument", detail: PulseClientErrorDetail(responseCode: 400))
        }
        session.setControlHandler(.telemetryFlush) { _ in
            throw TestFailure("disk on fire")
        }
        try await session.connect()
        let invalid = try await server.sendControl(route: "config.invalidate")
        #expect(invalid.code == 400)
        let failed = try await server.sendControl(route: "telemetry.flush")
        #expect(failed.code == 500)
        #expect(failed.msg?.contains("disk") == false)
        #expect(session.isConnected)
        await server.stop(closing: session)
    }

    @Test("other biz types from the server: unallocated 404, client-only or reserved 400")
    func otherBizTypes() async throws {
        let (server, session, _) = try await startServerSession()
        try await session.connect()
        #expect(try await server.sendRaw(bizType: 42, payload: bytes("{}")).code == 404)
        let clientOnly = PulseBizType.clientEventBatchUpload.rawValue
        #expect(try await server.sendRaw(bizType: clientOnly, payload: smallBatch()).code == 400)
        #expect(try await server.sendRaw(bizType: PulseBizType.reserved.rawValue, payload: bytes("{}")).code == 400)
        #expect(session.isConnected)
        await server.stop(closing: session)
    }
}
