/// One peer's view of the registry: its role and the set of allocated types it implements.
///
/// The canonical table says which types exist; each component implements a different subset (the
/// ingest server answers all client types, a client answers only the control RPC routes it allowlists,
/// ...). ``decide(bizType:oneWay:phase:)`` turns the contract's packet-type, direction and session rules
/// into one decision so every component applies them the same way.
public struct PulsePeerProfile: Sendable, Hashable {
    /// Which end of the connection this peer is.
    public let role: PulsePeerRole
    /// The allocated types whose inbound requests this peer handles. Others get code 501.
    public let implemented: Set<PulseBizType>

    /// Creates a profile. Every member of `implemented` must be allocated and must be a type the
    /// remote peer is allowed to originate.
    public init(role: PulsePeerRole, implemented: Set<PulseBizType>) {
        for bizType in implemented {
            guard let entry = PulseBizType.registry[bizType] else {
                preconditionFailure("\(bizType) is not allocated")
            }
            precondition(
                entry.direction.allowsRequest(from: role.remote),
                "\(bizType) cannot be received by a \(role.rawValue)")
        }
        self.role = role
        self.implemented = implemented
    }

    /// Whether this peer handles inbound requests of `bizType`.
    public func implements(_ bizType: PulseBizType) -> Bool {
        implemented.contains(bizType)
    }

    /// Classifies an inbound request (`oneWay == false`) or one-way frame (`oneWay == true`).
    ///
    /// Responses never come here: they complete an in-flight request. The rules, in order:
    /// 1. Server, first frame: anything but a `CLIENT_CONNECT` request closes the connection.
    /// 2. `biz_type` 0 gets 400; an unallocated value gets 404 (one-way frames included).
    /// 3. A one-way frame with an allocated type gets 400: no allocated type may travel one-way, and
    ///    PulseGate answers with a response using the frame's `message_id`.
    /// 4. A type the remote peer may not originate (a `CLIENT_*` request sent by a server) gets 400.
    /// 5. Before `CLIENT_CONNECT` succeeded, anything but `CLIENT_CONNECT` gets 401; after it
    ///    succeeded, another `CLIENT_CONNECT` gets 409 (the identity is immutable).
    /// 6. An allocated type this peer does not implement gets 501; otherwise dispatch.
    public func decide(bizType raw: UInt8, oneWay: Bool, phase: PulseSessionPhase) -> PulseInboundDecision {
        let bizType = PulseBizType(rawValue: raw)
        if phase == .awaitingFirstFrame && role == .server {
            if oneWay || bizType != .clientConnect {
                return .close(reason: "first frame must be a CLIENT_CONNECT request, got \(bizType)")
            }
        }
        guard let entry = PulseBizType.registry[bizType] else {
            if bizType == .reserved {
                return .reject(.badRequest, message: "biz_type 0 is reserved")
            }
            return .reject(.notFound, message: "unsupported pulse biz_type=\(raw)")
        }
        if oneWay {
            return .reject(.badRequest, message: "\(entry.name) must be sent as a request, not one-way")
        }
        if !entry.direction.allowsRequest(from: role.remote) {
            return .reject(.badRequest, message: "\(entry.name) cannot be sent by a \(role.remote.rawValue)")
        }
        switch phase {
        case .awaitingFirstFrame, .awaitingConnect:
            if bizType != .clientConnect && role == .server {
                return .reject(.unauthorized, message: "CLIENT_CONNECT has not succeeded on this connection")
            }
            if role == .client {
                return .reject(.unauthorized, message: "this connection is not registered yet")
            }
        case .connected:
            if bizType == .clientConnect {
                return .reject(.conflict, message: "connection is already registered; its identity is immutable")
            }
        }
        guard implemented.contains(bizType) else {
            return .reject(.notImplemented, message: "\(entry.name) is not implemented by this peer")
        }
        return .dispatch(bizType)
    }
}
