/// Which peer may originate requests of a business type.
public enum PulseBizDirection: String, Sendable, Hashable {
    /// Only the SDK/client sends the request; the server answers.
    case clientToServer
    /// Either peer may send the request; the other answers.
    case bidirectional

    /// Whether a request of this direction may be originated by `role`.
    public func allowsRequest(from role: PulsePeerRole) -> Bool {
        switch self {
        case .bidirectional: return true
        case .clientToServer: return role == .client
        }
    }
}

/// One row of the canonical `biz_type` table.
public struct PulseBizTypeEntry: Sendable, Hashable {
    /// The allocated value.
    public let bizType: PulseBizType
    /// The contract name, for example `CLIENT_EVENT_BATCH_UPLOAD`.
    public let name: String
    /// Which peer may originate the request.
    public let direction: PulseBizDirection

    /// Creates an entry.
    public init(bizType: PulseBizType, name: String, direction: PulseBizDirection) {
        self.bizType = bizType
        self.name = name
        self.direction = direction
    }
}
