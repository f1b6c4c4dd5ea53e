import MsgTrans
import MsgTransRuntime
import PulseKit
import PulseProtocol
import PulseStorage

extension PulseSession {
    /// CLIENT_HEARTBEAT: checks the connection ID and SDK version against the connected identity,
    /// updates the durable connection history, then refreshes the presence TTL.
    func handleHeartbeat(_ request: HeartbeatRequest, identity: SessionIdentity) async -> MsgTransReply {
        guard request.connectionId == identity.connectionId else {
            return core.reject(.forbidden, "connectionId does not match this connection")
        }
        guard request.sdkVersion == identity.sdkVersion else {
            return core.reject(.forbidden, "sdkVersion differs from the one declared at connect")
        }
        let now = core.clock.wallClockMilliseconds()
        do {
            try await core.store.recordHeartbeat(connectionId: identity.connectionId, at: now)
        } catch {
            return core.reject(.unavailable, "connection registry unavailable, retry with backoff")
        }
        core.registry.refresh(connectionId: identity.connectionId, presentUntil: now + core.presenceTTLMs)
        let policy = core.policy
        let snapshot = policy.app(identity.appId)?.policy
        let result = HeartbeatResult(
            accepted: true, serverTimeMs: now, configRevision: snapshot?.revision ?? 0,
            heartbeatIntervalMs: policy.heartbeatIntervalMs, collectKinds: snapshot?.collectKinds ?? [])
        return Envelope.success(result, compression: .none)
    }
}
