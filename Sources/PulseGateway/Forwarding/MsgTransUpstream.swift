import MsgTrans
import MsgTransRuntime
import PulseJSON
import Synchronization

/// ``UpstreamConnector`` over a msgtrans TCP connection (MsgTransRuntime): CONNECT first, then
/// requests; CLIENT_HEARTBEAT at the interval the server asks for (clamped to 15 s – 5 min)
/// while the connection is open.
struct MsgTransUpstreamConnector: UpstreamConnector {
    var host: String
    var port: Int
    var requestTimeout: Duration
    var connectTimeout: Duration

    func open(connectPayload: [UInt8]) async throws(UpstreamFailure) -> any UpstreamSession {
        var configuration = MsgTransConfiguration()
        configuration.requestTimeout = requestTimeout
        configuration.connectTimeout = connectTimeout
        let connection: MsgTransConnection
        do {
            connection = try await MsgTransConnection.connect(host: host, port: port, configuration: configuration)
        } catch {
            throw UpstreamFailure(kind: .transport, message: "connect to \(host):\(port) failed: \(error.code)")
        }
        let session = MsgTransUpstreamSession(connection: connection, timeout: requestTimeout)
        let reply: UpstreamReply
        let data: JSONValue?
        do {
            (reply, data) = try await session.exchange(.connect, payload: connectPayload, compression: 0)
        } catch {
            await connection.close()
            throw error
        }
        guard reply.code == 0, data?["connected"] == .bool(true) else {
            await connection.close()
            if reply.code == 0 {
                throw UpstreamFailure(kind: .transport, message: "CLIENT_CONNECT answered without connected=true")
            }
            throw UpstreamFailure(
                kind: .connectRejected(code: reply.code),
                message: "CLIENT_CONNECT rejected with code \(reply.code): \(reply.message ?? "")")
        }
        var connectionID = ""
        if case .string(let text)? = data?["connectionId"] { connectionID = text }
        var interval: Int64 = 60_000
        if case .int(let number)? = data?["heartbeatIntervalMs"] { interval = number }
        var sdkVersion = ""
        if case .string(let text)? = (try? JSONValue.parse(connectPayload))?["sdkVersion"] { sdkVersion = text }
        session.startHeartbeat(connectionID: connectionID, intervalMilliseconds: interval, sdkVersion: sdkVersion)
        return session
    }
}

/// One msgtrans connection bound to an identity.
final class MsgTransUpstreamSession: UpstreamSession, Sendable {
    private let connection: MsgTransConnection
    private let timeout: Duration
    private let state = Mutex(State())

    private struct State {
        var heartbeat: Task<Void, Never>?
        var lacksCrashUpload = false
    }

    init(connection: MsgTransConnection, timeout: Duration) {
        self.connection = connection
        self.timeout = timeout
    }

    var isOpen: Bool { !connection.isClosed }

    var lacksCrashUpload: Bool {
        get { state.withLock { $0.lacksCrashUpload } }
        set { state.withLock { $0.lacksCrashUpload = newValue } }
    }

    func request(_ operation: UpstreamOperation, payload: [UInt8], compression: UInt8) async throws(UpstreamFailure)
        -> UpstreamReply
    {
        try await exchange(operation, payload: payload, compression: compression).0
    }

    /// Sends a request; returns the envelope and its `data`.
    func exchange(_ operation: UpstreamOperation, payload: [UInt8], compression: UInt8) async throws(UpstreamFailure)
        -> (UpstreamReply, JSONValue?)
    {
        let response: MsgTransMessage
        do {
            response = try await connection.request(
                bizType: operation.rawValue, payload: payload, compression: Compression(rawValue: compression) ?? .none,
                timeout: timeout)
        } catch {
            throw UpstreamFailure(kind: .transport, message: "\(operation) request failed: \(error.code)")
        }
        guard let document = try? JSONParser(maxDepth: 64, maxBytes: 16 << 20).parse(response.payload),
            document.root.kind == .object
        else {
            throw UpstreamFailure(kind: .transport, message: "\(operation) response is not a JSON envelope")
        }
        let root = document.root
        let code = root["code"].flatMap { $0.isNull ? 0 : $0.int64 } ?? 0
        let data = root["data"]
        let reply = UpstreamReply(
            code: Int(clamping: code), dataIsTrue: data?.bool == true, message: root["msg"]?.string)
        return (reply, data?.value)
    }

    func startHeartbeat(connectionID: String, intervalMilliseconds: Int64, sdkVersion: String) {
        let clamped = min(max(intervalMilliseconds, 15_000), 300_000)
        let task = Task { [weak self] in
            var interval = clamped
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(interval))
                guard let self, !Task.isCancelled, self.isOpen else { return }
                var writer = PayloadWriter(capacity: 128)
                writer.beginObject()
                writer.field("connectionId", connectionID)
                writer.field("clientTimeMs", GatewayClock.system.now())
                writer.field("sdkVersion", sdkVersion)
                writer.endObject()
                do {
                    let (reply, data) = try await self.exchange(.heartbeat, payload: writer.bytes, compression: 0)
                    if reply.code != 0 {
                        await self.connection.close()
                        return
                    }
                    if case .int(let next)? = data?["heartbeatIntervalMs"] {
                        interval = min(max(next, 15_000), 300_000)
                    }
                } catch {
                    await self.connection.close()
                    return
                }
            }
        }
        state.withLock { $0.heartbeat = task }
    }

    func close() async {
        let heartbeat = state.withLock { state -> Task<Void, Never>? in
            defer { state.heartbeat = nil }
            return state.heartbeat
        }
        heartbeat?.cancel()
        await connection.close()
    }
}
