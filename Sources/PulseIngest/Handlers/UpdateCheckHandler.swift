import MsgTransRuntime
import PulseProtocol

extension PulseSession {
    /// CLIENT_APP_UPDATE_CHECK: the update decision for the installed build, ordered by build
    /// number, with the root-level compatibility copy. With no release information the answer is
    /// `none` (the server fails open like the SDK does).
    func handleUpdateCheck(_ request: UpdateCheckRequest, identity: SessionIdentity) -> MsgTransReply {
        guard request.appKey == identity.appId else {
            return core.reject(.forbidden, "appKey differs from the connected app")
        }
        guard request.platform == identity.platform else {
            return core.reject(.forbidden, "platform differs from the connected platform")
        }
        if let connected = identity.packageName, connected != request.packageName {
            return core.reject(.forbidden, "packageName differs from the connected package")
        }
        let result =
            core.policy.app(identity.appId)?.updateDecision(
                platform: request.platform, packageName: request.packageName, buildNumber: request.buildNumber)
            ?? .noUpdate
        return Envelope.success(result)
    }
}
