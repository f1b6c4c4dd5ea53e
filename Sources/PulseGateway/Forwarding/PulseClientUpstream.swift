import MsgTrans
import PulseClient
import PulseJSON
import PulseKit
import PulseProtocol
import Synchronization

/// ``UpstreamConnector`` over `PulseClient`: one ``PulseClientSession`` per device identity.
///
/// The session does CLIENT_CONNECT, heartbeats, the 401 re-register-and-retry-once and the
/// `config.invalidate` allowlist; this adapter adds what is the gateway's decision: revisions from
/// CONNECT and heartbeat results and `config.invalidate` requests go to the ``PolicyCache``, which
/// pulls when the revision is newer than its cached one. Sessions do not reconnect in the
/// background (`keepConnected` off): the forwarder owns retry timing through each row's backoff,
/// and a later request re-registers on demand.
struct PulseClientUpstreamConnector: UpstreamConnector {
    var host: String
    var port: Int
    var requestTimeout: Duration
    var connectTimeout: Duration
    /// Counts every real handshake (TCP connect plus CLIENT_CONNECT) of every session made here,
    /// by result, as `pulsegate_upstream_connects_total`.
    var metrics: GatewayMetrics? = nil
    /// The most requests in flight on one connection (``ForwardingSettings/forwardWindow``).
    var maxInFlightPerConnection = 8

    func open(connectPayload: [UInt8], policy: PolicyCache?) async throws(UpstreamFailure) -> any UpstreamSession {
        let identity: ConnectRequest
        do {
            identity = try ConnectRequest(decodingJSON: connectPayload)
        } catch {
            throw UpstreamFailure(
                kind: .connectRejected(code: 400), message: "stored identity is not a CONNECT payload")
        }
        let session = makeSession(identity: identity)
        let upstream = PulseClientUpstreamSession(session: session, app: identity.appId, policy: policy)
        do {
            try await session.connect()
        } catch {
            await upstream.close()
            throw Self.failure(error, host: host, port: port)
        }
        policy?.remember(identity: identity)
        return upstream
    }

    /// A session for `identity` with the forwarder's timeouts, not yet connected.
    func makeSession(identity: ConnectRequest, keepConnected: Bool = false) -> PulseClientSession {
        var configuration = PulseClientConfiguration(host: host, port: port, identity: identity)
        configuration.requestTimeout = requestTimeout
        configuration.connectTimeout = connectTimeout
        configuration.keepConnected = keepConnected
        configuration.maxInFlightRequests = maxInFlightPerConnection
        if let metrics {
            configuration.handshakeObserver = { outcome in
                switch outcome {
                case .success: metrics.connect(result: "ok")
                case .failure(let error) where error.code == .connectRejected: metrics.connect(result: "rejected")
                case .failure(let error) where error.code == .timeout: metrics.connect(result: "timeout")
                case .failure: metrics.connect(result: "failed")
                }
            }
        }
        return PulseClientSession(configuration: configuration)
    }

    static func failure(_ error: PulseClientError, host: String, port: Int) -> UpstreamFailure {
        if error.code == .connectRejected, let code = error.responseCode {
            return UpstreamFailure(
                kind: .connectRejected(code: code), message: "CLIENT_CONNECT rejected with code \(code)")
        }
        return UpstreamFailure(kind: .transport, message: "upstream \(host):\(port): \(error.message)")
    }
}

/// One identity's ``PulseClientSession`` as an ``UpstreamSession``.
final class PulseClientUpstreamSession: UpstreamSession {
    let session: PulseClientSession
    let app: String
    private let policy: PolicyCache?
    private let state = Mutex(State())

    private struct State {
        var lacksCrashUpload = false
        var closed = false
        var revisions: Task<Void, Never>?
    }

    /// Wires `session` to `policy`: revision updates and `config.invalidate` trigger pulls.
    init(session: PulseClientSession, app: String, policy: PolicyCache?) {
        self.session = session
        self.app = app
        self.policy = policy
        guard let policy else { return }
        policy.attach(session, app: app)
        let updates = session.configRevisionUpdates()
        let task = Task { [weak session] in
            for await revision in updates {
                guard let session else { return }
                policy.observe(app: app, revision: revision, session: session)
            }
        }
        state.withLock { $0.revisions = task }
    }

    var isOpen: Bool { !state.withLock { $0.closed } }

    var lacksCrashUpload: Bool {
        get { state.withLock { $0.lacksCrashUpload } }
        set { state.withLock { $0.lacksCrashUpload = newValue } }
    }

    func request(
        _ operation: PulseBizType, wirePayload: [UInt8], compression: Compression, retryingUnauthorized: Bool
    ) async throws(UpstreamFailure) -> UpstreamReply {
        let response: PulseResponse
        do {
            response = try await session.send(
                bizType: operation, wirePayload: wirePayload, compression: compression,
                retryingUnauthorized: retryingUnauthorized)
        } catch {
            throw UpstreamFailure(kind: .transport, message: "\(operation) failed: \(error.message)")
        }
        return UpstreamReply(code: response.code, dataIsTrue: response.data == .bool(true), message: response.msg)
    }

    func submit(
        _ operation: PulseBizType, wirePayload: [UInt8], compression: Compression,
        completion: @escaping @Sendable (Result<UpstreamReply, UpstreamFailure>) -> Void
    ) -> Bool {
        session.submit(bizType: operation, wirePayload: wirePayload, compression: compression) { result in
            switch result {
            case .success(let response):
                completion(
                    .success(
                        UpstreamReply(
                            code: response.code, dataIsTrue: response.data == .bool(true), message: response.msg)))
            case .failure(let error):
                completion(
                    .failure(UpstreamFailure(kind: .transport, message: "\(operation) failed: \(error.message)")))
            }
        }
    }

    func connect() async throws(UpstreamFailure) {
        do {
            try await session.connect()
        } catch {
            throw PulseClientUpstreamConnector.failure(
                error, host: session.configuration.host, port: session.configuration.port)
        }
    }

    func pullConfig() async {
        if let policy {
            _ = await policy.pull(app: app, session: session)
        } else {
            _ = try? await session.pullConfig(currentRevision: 0)
        }
    }

    func close() async {
        let revisions = state.withLock { state -> Task<Void, Never>? in
            state.closed = true
            defer { state.revisions = nil }
            return state.revisions
        }
        policy?.detach(session, app: app)
        await session.close()
        revisions?.cancel()
    }
}
