import MsgTrans
import MsgTransRuntime
import PulseProtocol

/// The delegate of one connection of a session: answers the server's requests and reports the close.
///
/// Admission follows the client profile of the registry: only BIDIRECTIONAL_CONTROL_RPC requests are
/// dispatched; a one-way frame of an allocated type or a `CLIENT_*` type sent by the server gets 400,
/// an unallocated type 404, biz type 0 gets 400. Control requests are admitted in every phase: a
/// server only sends them after answering CLIENT_CONNECT, and the response and a control request
/// can arrive in one read, before the session has recorded the connect.
final class SessionConnectionDelegate: MsgTransConnectionDelegate {
    static let profile = PulsePeerProfile(role: .client, implemented: [.bidirectionalControlRPC])

    let generation: UInt64
    private weak let session: PulseClientSession?
    private let router: ControlRouter
    private let replyCompression: Compression

    init(session: PulseClientSession, generation: UInt64, router: ControlRouter, replyCompression: Compression) {
        self.session = session
        self.generation = generation
        self.router = router
        self.replyCompression = replyCompression
    }

    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        switch Self.profile.decide(bizType: header.bizType, oneWay: header.packetType == .oneWay, phase: .connected) {
        case .dispatch:
            return .dispatch
        case .reject(let code, let message):
            return .respond(MsgTransReply(ControlRouter.failure(code, message)))
        case .close:
            return .close
        }
    }

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        guard PulseBizType(rawValue: request.bizType) == .bidirectionalControlRPC else {
            return MsgTransReply(ControlRouter.failure(.notFound, "unsupported pulse biz_type=\(request.bizType)"))
        }
        return MsgTransReply(await router.answer(request.payload), compression: replyCompression)
    }

    func connectionDidClose(_ connection: MsgTransConnection, reason: MsgTransRuntimeError) {
        session?.transportClosed(generation: generation)
    }
}
