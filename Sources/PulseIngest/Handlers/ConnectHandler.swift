import MsgTrans
import MsgTransRuntime
import PulseKit
import PulseProtocol
import PulseStorage

extension PulseSession {
    /// CLIENT_CONNECT: validates the request, applies the app allowlist and package policy, records
    /// the connection durably and binds the identity. Runs exclusively: nothing else on this
    /// connection is admitted until it returns.
    func handleConnect(_ payload: [UInt8], on connection: MsgTransConnection) async -> MsgTransReply {
        let reply = await decoding(payload, as: "CLIENT_CONNECT", PayloadCoding.decodeConnect) { request in
            await connect(request, on: connection)
        }
        if identity == nil {
            _ = finishConnecting(.awaitingConnect)
        }
        return reply
    }

    private func connect(_ request: ConnectRequest, on connection: MsgTransConnection) async -> MsgTransReply {
        guard request.protocolVersion == ConnectRequest.currentProtocolVersion else {
            return core.reject(
                .badRequest,
                "unsupported protocolVersion \(request.protocolVersion); this server speaks "
                    + "\(ConnectRequest.currentProtocolVersion)")
        }
        let required: [(String, String)] = [
            ("appId", request.appId), ("deviceId", request.deviceId), ("installationId", request.installationId),
            ("platform", request.platform), ("sdkVersion", request.sdkVersion),
        ]
        if let empty = required.first(where: { $0.1.isEmpty }) {
            return core.reject(.badRequest, "malformed CLIENT_CONNECT: \(empty.0) is empty")
        }
        let policy = core.policy
        guard let app = policy.app(request.appId) else {
            return core.reject(.forbidden, "app \(PayloadCoding.quoted(request.appId)) is not allowed")
        }
        guard app.allowsPackage(request.packageName) else {
            let package = request.packageName.map(PayloadCoding.quoted) ?? "null"
            return core.reject(
                .forbidden, "package \(package) is not allowed for app \(PayloadCoding.quoted(app.appId))")
        }
        let identity = SessionIdentity(
            connectionId: ConnectionID.make(), appId: request.appId, packageName: request.packageName,
            deviceId: request.deviceId, installationId: request.installationId, platform: request.platform,
            sdkVersion: request.sdkVersion, appVersion: request.appVersion, buildNumber: request.buildNumber)
        let now = core.clock.wallClockMilliseconds()
        do {
            try await core.store.recordConnect(identity, remoteAddress: connection.remoteAddress, at: now)
        } catch {
            return core.reject(.unavailable, "connection registry unavailable, retry with backoff")
        }
        core.registry.add(
            connectionId: identity.connectionId, appId: identity.appId, connection: connection,
            presentUntil: now + core.presenceTTLMs)
        guard finishConnecting(.connected(identity)) else {
            // The connection closed while the connect was being recorded.
            sessionEnded(identity)
            return core.reject(.unavailable, "connection closed")
        }
        connection.markEstablished()
        let result = ConnectResult(
            connectionId: identity.connectionId, serverTimeMs: now, configRevision: app.policy.revision,
            heartbeatIntervalMs: policy.heartbeatIntervalMs, collectKinds: app.policy.collectKinds)
        return Envelope.success(result, compression: .none)
    }
}
