import MsgTrans
import MsgTransRuntime
import PulseJSON
import PulseProtocol
import PulseTestSupport
import Synchronization

/// A small Pulse server for end-to-end tests, built on MsgTransRuntime: first-frame rule, CONNECT
/// with a scripted answer, heartbeats checked against the connection ID, batch uploads with
/// scripted answers, requests that are never answered, and control RPCs sent to the client.
final class TestPulseServer: Sendable {
    struct Behavior: Sendable {
        /// The code CONNECT is answered with (0 = success).
        var connectCode: PulseResponseCode = .ok
        var configRevision: Int64 = 1
        var heartbeatIntervalMs: Int64 = 60_000
        /// Codes to answer the next uploads with, in order; when empty uploads are accepted.
        var uploadCodes: [PulseResponseCode] = []
        /// Codes to answer the next heartbeats with, in order; when empty heartbeats are accepted.
        var heartbeatCodes: [PulseResponseCode] = []
        /// Biz types whose requests are never answered (until the server stops).
        var hang: Set<PulseBizType> = []
    }

    struct Upload: Sendable {
        var bizType: PulseBizType
        var compression: MsgTrans.Compression
        var payload: [UInt8]
        var connectionId: String
    }

    struct Log: Sendable {
        var connects: [ConnectRequest] = []
        var heartbeats: [HeartbeatRequest] = []
        var uploads: [Upload] = []
        var configPulls: [ConfigPullRequest] = []
        var firstFrames: [PulseBizType] = []
        var connectionIds: [String] = []
    }

    let server: MsgTransServer
    let behavior = Mutex(Behavior())
    let log = Mutex(Log())
    /// Opened at stop: requests left hanging then answer.
    private let release = Gate()
    private let connections = Mutex<[(id: String, connection: MsgTransConnection)]>([])
    private let counter = Atomic<Int>(0)

    var port: Int { server.port }

    private init(server: MsgTransServer) {
        self.server = server
    }

    static func start() async throws -> TestPulseServer {
        let box = ServerBox()
        var configuration = MsgTransServerConfiguration()
        configuration.shutdownGracePeriod = .milliseconds(500)
        let server = try await MsgTransServer.start(host: "127.0.0.1", port: 0, configuration: configuration) {
            connection in
            ServerSession(owner: box)
        }
        let pulse = TestPulseServer(server: server)
        box.set(pulse)
        return pulse
    }

    func stop() async {
        release.open()
        await server.shutdown()
    }

    /// Closes every open connection from the server side.
    func dropConnections() async {
        let open = connections.withLock { list in
            let open = list.map(\.connection)
            list = []
            return open
        }
        for connection in open {
            await connection.close()
        }
    }

    /// Sends a BIDIRECTIONAL_CONTROL_RPC to the most recently registered connection.
    func sendControl(_ payload: [UInt8]) async throws -> PulseEnvelope<ControlRPCResult> {
        guard let connection = connections.withLock({ $0.last?.connection }) else {
            throw TestFailure("no registered connection")
        }
        let response = try await connection.request(
            bizType: PulseBizType.bidirectionalControlRPC.rawValue, payload: payload)
        return try PulseEnvelope<ControlRPCResult>(decodingJSON: response.payload)
    }

    /// Sends a request of any biz type to the most recently registered connection.
    func sendRaw(bizType: UInt8, payload: [UInt8]) async throws -> PulseEnvelope<ControlRPCResult> {
        guard let connection = connections.withLock({ $0.last?.connection }) else {
            throw TestFailure("no registered connection")
        }
        let response = try await connection.request(bizType: bizType, payload: payload)
        return try PulseEnvelope<ControlRPCResult>(decodingJSON: response.payload)
    }

    func sendControl(route: String, args: [JSONMember] = []) async throws -> PulseEnvelope<ControlRPCResult> {
        try await sendControl(ControlRPCRequest(route: ControlRoute(validating: route), args: args).encodeJSON())
    }

    // MARK: - Handlers

    fileprivate func connect(_ request: MsgTransMessage, on connection: MsgTransConnection) -> (String?, [UInt8]) {
        let decoded: ConnectRequest
        do {
            decoded = try ConnectRequest(decodingJSON: request.payload)
        } catch {
            return (nil, PulseEnvelope<ConnectResult>.failure(.badRequest, "malformed").encodeJSON())
        }
        let current = behavior.withLock { $0 }
        log.withLock { $0.connects.append(decoded) }
        guard current.connectCode == .ok else {
            return (nil, PulseEnvelope<ConnectResult>.failure(current.connectCode, "rejected").encodeJSON())
        }
        let id = "conn-\(counter.add(1, ordering: .relaxed).newValue)"
        connections.withLock { $0.append((id, connection)) }
        log.withLock { $0.connectionIds.append(id) }
        let result = ConnectResult(
            connectionId: id, serverTimeMs: 1_700_000_000_000, configRevision: current.configRevision,
            heartbeatIntervalMs: current.heartbeatIntervalMs, collectKinds: [.crash, .error])
        return (id, PulseEnvelope.ok(result).encodeJSON())
    }

    fileprivate func handle(_ request: MsgTransMessage, connectionId: String) async -> [UInt8] {
        let bizType = PulseBizType(rawValue: request.bizType)
        if bizType == .clientEventBatchUpload || bizType == .clientCrashBatchUpload {
            log.withLock {
                $0.uploads.append(
                    Upload(
                        bizType: bizType, compression: request.header.compression, payload: request.payload,
                        connectionId: connectionId))
            }
        }
        if behavior.withLock({ $0.hang.contains(bizType) }) {
            await release.wait()
            return PulseEnvelope<Bool>.failure(.unavailable, "stopping").encodeJSON()
        }
        switch bizType {
        case .clientHeartbeat:
            guard let heartbeat = try? HeartbeatRequest(decodingJSON: request.payload) else {
                return PulseEnvelope<Bool>.failure(.badRequest, "malformed").encodeJSON()
            }
            log.withLock { $0.heartbeats.append(heartbeat) }
            let (code, current): (PulseResponseCode?, Behavior) = behavior.withLock { behavior in
                (behavior.heartbeatCodes.isEmpty ? nil : behavior.heartbeatCodes.removeFirst(), behavior)
            }
            if let code, code != .ok {
                return PulseEnvelope<HeartbeatResult>.failure(code, "scripted").encodeJSON()
            }
            guard heartbeat.connectionId == connectionId else {
                return PulseEnvelope<HeartbeatResult>.failure(.forbidden, "wrong connectionId").encodeJSON()
            }
            return PulseEnvelope.ok(
                HeartbeatResult(
                    serverTimeMs: 1_700_000_000_000, configRevision: current.configRevision,
                    heartbeatIntervalMs: current.heartbeatIntervalMs)
            ).encodeJSON()
        case .clientEventBatchUpload, .clientCrashBatchUpload:
            let code = behavior.withLock { $0.uploadCodes.isEmpty ? nil : $0.uploadCodes.removeFirst() }
            if let code, code != .ok {
                return PulseEnvelope<Bool>.failure(code, "scripted").encodeJSON()
            }
            return PulseEnvelope<Bool>.accepted.encodeJSON()
        case .clientConfigPull:
            guard let pull = try? ConfigPullRequest(decodingJSON: request.payload) else {
                return PulseEnvelope<Bool>.failure(.badRequest, "malformed").encodeJSON()
            }
            log.withLock { $0.configPulls.append(pull) }
            let snapshot = ConfigSnapshot(revision: behavior.withLock { $0.configRevision })
            let code = pull.responseCode(serving: snapshot)
            guard code == .ok else {
                return PulseEnvelope<ConfigSnapshot>.failure(code, "config conflict").encodeJSON()
            }
            return PulseEnvelope.ok(snapshot).encodeJSON()
        case .clientAppUpdateCheck:
            let result = UpdateCheckResult(
                action: .optional, latestVersionName: "2.0", latestBuildNumber: 50, releaseNotes: "notes",
                downloadUrl: "https://example.invalid/app")
            return PulseEnvelope.ok(result).encodeJSON()
        default:
            return PulseEnvelope<Bool>.failure(.notFound, "unsupported pulse biz_type=\(request.bizType)")
                .encodeJSON()
        }
    }

    fileprivate func recordFirstFrame(_ bizType: UInt8) {
        log.withLock { $0.firstFrames.append(PulseBizType(rawValue: bizType)) }
    }
}

/// The per-connection server side: first-frame rule, CONNECT exclusively, then dispatch.
private final class ServerSession: MsgTransConnectionDelegate {
    enum Phase {
        case fresh
        case connecting
        case connected(String)
        case rejected
    }

    let owner: ServerBox
    let phase = Mutex(Phase.fresh)

    init(owner: ServerBox) {
        self.owner = owner
    }

    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        phase.withLock { phase in
            switch phase {
            case .fresh:
                owner.server?.recordFirstFrame(header.bizType)
                guard header.packetType == .request, header.bizType == PulseBizType.clientConnect.rawValue else {
                    return .close
                }
                phase = .connecting
                return .dispatchExclusively
            case .rejected:
                guard header.bizType == PulseBizType.clientConnect.rawValue else {
                    return .respond(
                        MsgTransReply(PulseEnvelope<Bool>.failure(.unauthorized, "connect first").encodeJSON()))
                }
                phase = .connecting
                return .dispatchExclusively
            case .connecting, .connected:
                return .dispatch
            }
        }
    }

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        guard let server = owner.server else { return MsgTransReply([]) }
        if request.bizType == PulseBizType.clientConnect.rawValue {
            let (id, reply) = server.connect(request, on: connection)
            phase.withLock { $0 = id.map { .connected($0) } ?? .rejected }
            return MsgTransReply(reply)
        }
        guard case .connected(let id) = phase.withLock({ $0 }) else {
            return MsgTransReply(PulseEnvelope<Bool>.failure(.unauthorized, "connect first").encodeJSON())
        }
        return MsgTransReply(await server.handle(request, connectionId: id))
    }
}

/// Lets connection delegates (created before the server object exists) find it.
private final class ServerBox: Sendable {
    private let value = Mutex<TestPulseServer?>(nil)

    var server: TestPulseServer? { value.withLock { $0 } }

    func set(_ server: TestPulseServer) {
        value.withLock { $0 = server }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
