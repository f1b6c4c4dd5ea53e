import MsgTrans
import MsgTransRuntime
import PulseTestSupport
import Synchronization

@testable import PulseGateway

/// A real msgtrans server (MsgTransRuntime) that answers Pulse requests from a script: CONNECT is
/// accepted (reporting ``connectRevision``), CONFIG_PULL answers ``snapshot`` (or ``configPullCode``),
/// uploads get the next scripted code (then `{"code":0,"msg":null,"data":true}`), or with
/// ``dropUploads`` the connection is closed instead of answering. It counts connections: accepted,
/// registered (CONNECT answered) and the most registered ones open at once.
final class ScriptedUpstream: Sendable {
    struct Received: Sendable {
        var bizType: UInt8
        var payload: [UInt8]
        /// The serial number of the connection it arrived on (1, 2, … in accept order).
        var connection: Int
        var text: String { String(decoding: payload, as: UTF8.self) }
    }

    private struct State {
        var received: [Received] = []
        var uploadCodes: [Int] = []
        var connectRevision: Int64 = 0
        var connectCode = 0
        var snapshot = #"{"revision":1}"#
        var configPullCode = 0
        var dropUploads = false
        var accepted = 0
        var open: Set<Int> = []
        var peakOpen = 0
    }

    let server: MsgTransServer
    private let box: StateBox

    var port: Int { server.port }

    private init(server: MsgTransServer, box: StateBox) {
        self.server = server
        self.box = box
    }

    static func start(port: Int = 0, uploadCodes: [Int] = []) async throws -> ScriptedUpstream {
        let box = StateBox(State(uploadCodes: uploadCodes))
        let server = try await MsgTransServer.start(host: "127.0.0.1", port: port) { _ in
            let serial = box.state.withLock { state -> Int in
                state.accepted += 1
                return state.accepted
            }
            return Delegate(serial: serial, box: box) { message, connection in
                box.state.withLock {
                    $0.received.append(Received(bizType: message.bizType, payload: message.payload, connection: serial))
                }
                let current = box.state.withLock { $0 }
                switch message.bizType {
                case 1:
                    box.state.withLock { state in
                        state.open.insert(serial)
                        state.peakOpen = max(state.peakOpen, state.open.count)
                    }
                    if current.connectCode != 0 {
                        return MsgTransReply(
                            Array(#"{"code":\#(current.connectCode),"msg":"scripted","data":null}"#.utf8))
                    }
                    return MsgTransReply(
                        Array(
                            #"{"code":0,"msg":null,"data":{"connected":true,"protocolVersion":2,"connectionId":"c-1","serverTimeMs":0,"configRevision":\#(current.connectRevision),"heartbeatIntervalMs":60000,"collectKinds":[]}}"#
                                .utf8))
                case 3:
                    if current.configPullCode != 0 {
                        return MsgTransReply(
                            Array(#"{"code":\#(current.configPullCode),"msg":"scripted","data":null}"#.utf8))
                    }
                    return MsgTransReply(Array(#"{"code":0,"msg":null,"data":\#(current.snapshot)}"#.utf8))
                default:
                    if current.dropUploads {
                        await connection.close()
                        return MsgTransReply(Array(#"{"code":500,"msg":"dropped","data":null}"#.utf8))
                    }
                    let code = box.state.withLock { $0.uploadCodes.isEmpty ? 0 : $0.uploadCodes.removeFirst() }
                    if code == 0 { return MsgTransReply(Array(#"{"code":0,"msg":null,"data":true}"#.utf8)) }
                    return MsgTransReply(Array(#"{"code":\#(code),"msg":"scripted \#(code)","data":null}"#.utf8))
                }
            }
        }
        return ScriptedUpstream(server: server, box: box)
    }

    /// A loopback port nothing listens on (bound once, then closed), for outage tests.
    static func freePort() async throws -> Int {
        let probe = try await start()
        let port = probe.port
        await probe.stop()
        return port
    }

    /// Requests received so far, in order.
    var received: [Received] { box.state.withLock { $0.received } }

    /// Connections accepted so far.
    var acceptedConnections: Int { box.state.withLock { $0.accepted } }

    /// CONNECT requests received so far.
    var connects: Int { received.filter { $0.bizType == 1 }.count }

    /// Registered connections open now, and the most open at once so far.
    var openConnections: (now: Int, peak: Int) { box.state.withLock { ($0.open.count, $0.peakOpen) } }

    /// Uploads (biz 4 and 5) received so far.
    var uploads: [Received] { received.filter { $0.bizType == 4 || $0.bizType == 5 } }

    /// Sets what CONNECT reports and what CONFIG_PULL answers.
    func configure(
        connectRevision: Int64? = nil, connectCode: Int? = nil, snapshot: String? = nil, configPullCode: Int? = nil,
        dropUploads: Bool? = nil
    ) {
        box.state.withLock { state in
            if let dropUploads { state.dropUploads = dropUploads }
            if let connectRevision { state.connectRevision = connectRevision }
            if let connectCode { state.connectCode = connectCode }
            if let snapshot { state.snapshot = snapshot }
            if let configPullCode { state.configPullCode = configPullCode }
        }
    }

    func script(_ codes: [Int]) {
        box.state.withLock { $0.uploadCodes += codes }
    }

    func stop() async {
        await server.shutdown()
    }

    private final class StateBox: Sendable {
        let state: Mutex<State>
        init(_ value: State) { state = Mutex(value) }
    }

    /// Answers requests with `handler` and forgets the connection when it closes.
    private struct Delegate: MsgTransConnectionDelegate {
        let serial: Int
        let box: StateBox
        let handler: @Sendable (MsgTransMessage, MsgTransConnection) async -> MsgTransReply

        func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async -> MsgTransReply {
            await handler(request, connection)
        }

        func connectionDidClose(_ connection: MsgTransConnection, reason: MsgTransRuntimeError) {
            _ = box.state.withLock { $0.open.remove(serial) }
        }
    }
}
