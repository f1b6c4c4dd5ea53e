import MsgTransRuntime
import PulseProtocol

extension PulseSession {
    /// CLIENT_CONFIG_PULL: the app's complete policy snapshot; 409 when the client claims a newer
    /// revision than the server's, 403 when it lacks a capability the snapshot requires.
    func handleConfigPull(_ request: ConfigPullRequest, identity: SessionIdentity) -> MsgTransReply {
        guard let app = core.policy.app(identity.appId) else {
            return core.reject(.forbidden, "app \(PayloadCoding.quoted(identity.appId)) is no longer allowed")
        }
        let snapshot = app.policy
        switch request.responseCode(serving: snapshot) {
        case .ok:
            return Envelope.success(snapshot)
        case .conflict:
            return core.reject(
                .conflict,
                "configRevision \(request.configRevision) is newer than the server's \(snapshot.revision); "
                    + "reset to 0 and pull again")
        case .forbidden:
            return core.reject(.forbidden, "the client lacks a capability this policy requires")
        case let code:
            return core.reject(code, "config pull refused")
        }
    }
}
