import MsgTrans
import MsgTransRuntime
import PulseJSON
import PulseKit
import PulseProtocol
import PulseStorage

extension PulseSession {
    /// The control routes a client may call on this server.
    ///
    /// - `telemetry.ping`: `{"serverTimeMs":…}` — a liveness and clock check.
    /// - `config.revision`: `{"configRevision":…}` — the app's current policy revision, without the
    ///   snapshot (pull it with CLIENT_CONFIG_PULL).
    ///
    /// A malformed route is 400; any other well-formed route is 404 and the connection stays open.
    static let controlRoutes: Set<String> = ["telemetry.ping", "config.revision"]

    /// BIDIRECTIONAL_CONTROL_RPC sent by the client.
    func handleControl(_ request: ControlRPCRequest, identity: SessionIdentity) -> MsgTransReply {
        let route = request.route.name
        let result: JSONValue
        switch route {
        case "telemetry.ping":
            result = .object([JSONMember(key: "serverTimeMs", value: .int(core.clock.wallClockMilliseconds()))])
        case "config.revision":
            let revision = core.policy.app(identity.appId)?.policy.revision ?? 0
            result = .object([JSONMember(key: "configRevision", value: .int(revision))])
        default:
            return core.reject(.notFound, "unsupported control route \(PayloadCoding.quoted(route))")
        }
        return Envelope.success(ControlRPCResult(result), compression: .none)
    }
}
