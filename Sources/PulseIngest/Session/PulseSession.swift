import MsgTrans
import MsgTransRuntime
import PulseKit
import PulseProtocol
import PulseStorage
import Synchronization

/// The server side of one Pulse connection: the session rules on the read path and the handler of
/// each business type.
///
/// ``admit(_:on:)`` applies the contract's packet-type, direction and lifecycle rules from the
/// header alone (``PulsePeerProfile/decide(bizType:oneWay:phase:)``):
/// - first frame not a CLIENT_CONNECT request (including a response) → close, nothing sent,
///   nothing dispatched;
/// - CLIENT_CONNECT → dispatched exclusively, so frames behind it see its outcome;
/// - before a connect succeeded → 401; a second connect → 409;
/// - a one-way frame carrying an allocated type → a Response with its message id and code 400;
/// - unknown biz type → 404 (0 → 400); allocated but unimplemented → 501 (none here).
final class PulseSession: MsgTransConnectionDelegate {
    let core: IngestCore
    private let phase = Mutex(SessionPhase.awaitingFirstFrame)

    init(core: IngestCore) {
        self.core = core
    }

    /// The connected identity, if CLIENT_CONNECT succeeded.
    var identity: SessionIdentity? {
        phase.withLock { phase in
            if case .connected(let identity) = phase { return identity }
            return nil
        }
    }

    // MARK: - Admission (event loop thread)

    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        let oneWay = header.packetType == .oneWay
        let decision: PulseInboundDecision = phase.withLock { phase in
            let sessionPhase: PulseSessionPhase
            switch phase {
            case .awaitingFirstFrame: sessionPhase = .awaitingFirstFrame
            case .connecting, .awaitingConnect, .closed: sessionPhase = .awaitingConnect
            case .connected: sessionPhase = .connected
            }
            let decision = IngestCore.profile.decide(bizType: header.bizType, oneWay: oneWay, phase: sessionPhase)
            if case .dispatch(.clientConnect) = decision {
                phase = .connecting
            } else if phase == .awaitingFirstFrame {
                // Only a CLIENT_CONNECT request passes the first-frame rule, so this is a close.
                phase = .closed
            }
            return decision
        }
        switch decision {
        case .close:
            return .close
        case .reject(let code, let message):
            return .respond(core.reject(code, message))
        case .dispatch(let bizType):
            return bizType == .clientConnect ? .dispatchExclusively : .dispatch
        }
    }

    /// A response as the first frame breaks the first-frame rule: close. Later unmatched responses
    /// are protocol faults the runtime counts and drops; the connection stays open.
    func closesOnUnmatchedResponse(_ header: FrameHeader, on connection: MsgTransConnection) -> Bool {
        phase.withLock { phase in
            guard phase == .awaitingFirstFrame else { return false }
            phase = .closed
            return true
        }
    }

    // MARK: - Handlers (Swift tasks)

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        // Decompression already stopped at this limit; a plain payload meets the same one.
        guard request.payload.count <= core.maxPayloadBytes else {
            return core.reject(.badRequest, IngestCore.payloadTooLargeMessage(core.maxPayloadBytes))
        }
        let bizType = PulseBizType(rawValue: request.bizType)
        if bizType == .clientConnect {
            return await handleConnect(request.payload, on: connection)
        }
        guard let identity else {
            // Admission only dispatches other types on a connected session.
            return core.reject(.unauthorized, "CLIENT_CONNECT has not succeeded on this connection")
        }
        let payload = request.payload
        switch bizType {
        case .clientHeartbeat:
            return await decoding(payload, as: "CLIENT_HEARTBEAT", PayloadCoding.decodeHeartbeat) { request in
                await handleHeartbeat(request, identity: identity)
            }
        case .clientConfigPull:
            return await decoding(payload, as: "CLIENT_CONFIG_PULL", PayloadCoding.decodeConfigPull) { request in
                handleConfigPull(request, identity: identity)
            }
        case .clientCrashBatchUpload:
            return await handleCrashBatch(payload, identity: identity)
        case .clientEventBatchUpload:
            return await handleEventBatch(payload, identity: identity)
        case .clientAppUpdateCheck:
            return await decoding(payload, as: "CLIENT_APP_UPDATE_CHECK", PayloadCoding.decodeUpdateCheck) { request in
                handleUpdateCheck(request, identity: identity)
            }
        case .bidirectionalControlRPC:
            return await decoding(payload, as: "BIDIRECTIONAL_CONTROL_RPC", PayloadCoding.decodeControl) { request in
                handleControl(request, identity: identity)
            }
        default:
            return core.reject(.notFound, "unsupported pulse biz_type=\(request.bizType)")
        }
    }

    /// `handle` answering the request `decode` reads from `payload`, or a 400 naming `packet` (the
    /// request's contract name) when the payload is malformed.
    func decoding<Request>(
        _ payload: [UInt8], as packet: String, _ decode: ([UInt8]) throws(PulseProtocolError) -> Request,
        handle: (Request) async -> MsgTransReply
    ) async -> MsgTransReply {
        let request: Request
        do {
            request = try decode(payload)
        } catch {
            return core.reject(.badRequest, "malformed \(packet): \(PayloadCoding.summary(of: error))")
        }
        return await handle(request)
    }

    func connectionDidClose(_ connection: MsgTransConnection, reason: MsgTransRuntimeError) {
        let previous = phase.withLock { phase in
            let previous = phase
            phase = .closed
            return previous
        }
        if case .connected(let identity) = previous {
            sessionEnded(identity)
        }
    }

    /// Removes an ended session and records the close in the history.
    func sessionEnded(_ identity: SessionIdentity) {
        core.registry.remove(connectionId: identity.connectionId)
        let core = self.core
        let now = core.clock.wallClockMilliseconds()
        core.runInBackground {
            try? await core.store.recordClose(connectionId: identity.connectionId, at: now)
        }
    }

    /// Moves the phase from `connecting` to `next`; `false` if the connection closed meanwhile.
    func finishConnecting(_ next: SessionPhase) -> Bool {
        phase.withLock { phase in
            guard phase == .connecting else { return false }
            phase = next
            return true
        }
    }
}
