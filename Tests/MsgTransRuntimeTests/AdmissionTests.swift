import MsgTrans
import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@testable import MsgTransRuntime

/// A Pulse-like session: the first frame must be a CONNECT request (biz 1), nothing else is
/// admitted until the CONNECT handler has succeeded, one-way messages get a "400" reply.
final class SessionDelegate: MsgTransConnectionDelegate {
    enum State {
        case fresh
        case connecting
        case connected
    }

    let state = Mutex(State.fresh)
    let log: EventLog
    let connectGate: Gate

    init(log: EventLog, connectGate: Gate) {
        self.log = log
        self.connectGate = connectGate
    }

    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        state.withLock { state in
            switch state {
            case .fresh:
                guard header.packetType == .request && header.bizType == 1 else {
                    log.record("close")
                    return .close
                }
                state = .connecting
                log.record("admit connect")
                return .dispatchExclusively
            case .connecting:
                log.record("admitted while connecting")
                return .respond(MsgTransReply(bytes("401")))
            case .connected:
                if header.packetType == .oneWay {
                    log.record("one-way \(header.bizType) answered 400")
                    return .respond(MsgTransReply(bytes("400")))
                }
                if header.bizType == 99 {
                    log.record("ignore 99")
                    return .ignore
                }
                log.record("admit \(header.bizType)")
                return .dispatch
            }
        }
    }

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        guard request.bizType == 1 else {
            log.record("handle \(request.bizType)")
            return MsgTransReply(request.payload)
        }
        log.record("connect started")
        await connectGate.wait()
        state.withLock { $0 = .connected }
        log.record("connect done")
        return MsgTransReply(bytes("connected"))
    }

    func handleOneWay(_ message: MsgTransMessage, on connection: MsgTransConnection) async {
        log.record("one-way handler ran")
    }
}

@Suite("Admission hook", .serialized)
struct AdmissionTests {
    /// A server of ``SessionDelegate``s sharing one event log, their CONNECT handlers waiting at
    /// `connectGate` (at an open one when none is given).
    static func startSessionServer(connectGate: Gate? = nil) async throws -> (log: EventLog, server: MsgTransServer) {
        let log = EventLog()
        let gate = connectGate ?? Gate()
        if connectGate == nil { gate.open() }
        let server = try await startServer { _ in SessionDelegate(log: log, connectGate: gate) }
        return (log, server)
    }

    @Test("a first frame that is not CONNECT closes the connection without any response or dispatch")
    func closeWithoutResponse() async throws {
        let (log, server) = try await Self.startSessionServer()
        for first in [
            Frame(packetType: .oneWay, bizType: 5, messageID: 1, payload: bytes("{}")),
            Frame.request(bizType: 2, id: 1, bytes("{}")),
        ] {
            let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
            await raw.write(first.encoded())
            #expect(await raw.readToEnd() == [])
        }
        #expect(log.all == ["close", "close"])
        let stats = server.statistics.snapshot()
        #expect(stats.admissionCloses == 2)
        #expect(stats.framesOut == 0)
        await server.shutdown()
    }

    @Test("frames behind an exclusive CONNECT wait for its handler and then see the connected session")
    func exclusiveDispatchHoldsAdmission() async throws {
        let gate = Gate()
        let (log, server) = try await Self.startSessionServer(connectGate: gate)
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        var burst: [UInt8] = []
        Frame.request(bizType: 1, id: 1, bytes("connect")).encode(into: &burst)
        Frame.request(bizType: 5, id: 2, bytes("batch")).encode(into: &burst)
        Frame(packetType: .oneWay, bizType: 5, messageID: 3, payload: bytes("note")).encode(into: &burst)
        await raw.write(burst)
        #expect(await eventually { server.statistics.snapshot().framesIn == 3 && log.all.count >= 2 })
        #expect(log.all == ["admit connect", "connect started"])
        gate.open()
        var responses: [UInt32: [UInt8]] = [:]
        for _ in 0..<3 {
            let frame = try #require(await raw.readFrame())
            #expect(frame.packetType == .response)
            responses[frame.messageID] = frame.payload
        }
        #expect(responses == [1: bytes("connected"), 2: bytes("batch"), 3: bytes("400")])
        let entries = log.all
        #expect(Array(entries.prefix(4)) == ["admit connect", "connect started", "connect done", "admit 5"])
        #expect(entries.contains("one-way 5 answered 400"))
        #expect(!entries.contains("admitted while connecting"))
        #expect(!entries.contains("one-way handler ran"))
        #expect(server.statistics.snapshot().admissionReplies == 1)
        await server.shutdown()
    }

    @Test("an ignored request gets no response and the connection continues")
    func ignore() async throws {
        let (_, server) = try await Self.startSessionServer()
        let client = try await server.connectClient()
        #expect(try await client.request(bizType: 1, payload: []).payload == bytes("connected"))
        let error = await #expect(throws: MsgTransRuntimeError.self) {
            _ = try await client.request(bizType: 99, payload: [], timeout: .milliseconds(100))
        }
        #expect(error?.code == .timeout)
        #expect(try await client.request(bizType: 5, payload: bytes("on")).payload == bytes("on"))
        #expect(server.statistics.snapshot().ignoredMessages == 1)
        await server.shutdown(closing: client)
    }
}
