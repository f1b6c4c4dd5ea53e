import MsgTransRuntime
import PulseJSON
import PulseProtocol

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
    func handleControl(_ payload: [UInt8], identity: SessionIdentity) -> MsgTransReply {
        let route: String
        do {
            route = try PayloadCoding.decodeControlRoute(payload)
        } catch {
            return core.reject(.badRequest, "malformed BIDIRECTIONAL_CONTROL_RPC: \(PayloadCoding.summary(of: error))")
        }
        var writer = JSONWriter(capacity: 64)
        switch route {
        case "telemetry.ping":
            writer.beginObject()
            writer.field("serverTimeMs", core.clock.nowMilliseconds())
            writer.endObject()
        case "config.revision":
            writer.beginObject()
            writer.field("configRevision", core.policy.app(identity.appId)?.policy.revision ?? 0)
            writer.endObject()
        default:
            return core.reject(.notFound, "unsupported control route \(PayloadCoding.quoted(route))")
        }
        return Envelope.success(data: writer.bytes, compression: .none)
    }
}
