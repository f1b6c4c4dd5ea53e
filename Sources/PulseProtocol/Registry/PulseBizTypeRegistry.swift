/// The table of allocated Pulse business types, indexed by wire byte.
///
/// Values are permanent once assigned: append only, never renumber or reuse. The registry carries the
/// contract metadata (name, direction); which types a given peer *implements* is per peer, see
/// ``PulsePeerProfile``.
public struct PulseBizTypeRegistry: Sendable {
    /// The allocated entries in ascending value order.
    public let entries: [PulseBizTypeEntry]
    private let byValue: [PulseBizTypeEntry?]

    /// Builds a registry. Entries must have distinct values; value 0 cannot be allocated.
    init(entries: [PulseBizTypeEntry]) {
        var table = [PulseBizTypeEntry?](repeating: nil, count: 256)
        for entry in entries {
            precondition(entry.bizType != .reserved, "biz_type 0 is reserved")
            precondition(table[Int(entry.bizType.rawValue)] == nil, "duplicate biz_type \(entry.bizType.rawValue)")
            table[Int(entry.bizType.rawValue)] = entry
        }
        self.byValue = table
        self.entries = table.compactMap { $0 }
    }

    /// The entry for a wire byte, or `nil` when the value is reserved or unallocated.
    public subscript(raw: UInt8) -> PulseBizTypeEntry? {
        byValue[Int(raw)]
    }

    /// The entry for a business type, or `nil` when it is reserved or unallocated.
    public subscript(bizType: PulseBizType) -> PulseBizTypeEntry? {
        byValue[Int(bizType.rawValue)]
    }

    /// The entry with a contract name such as `CLIENT_CONNECT`.
    public func entry(named name: String) -> PulseBizTypeEntry? {
        entries.first { $0.name == name }
    }

    /// Pulse protocol version 2: seven allocated types plus reserved 0.
    static let protocolVersion2 = PulseBizTypeRegistry(entries: [
        PulseBizTypeEntry(bizType: .clientConnect, name: "CLIENT_CONNECT", direction: .clientToServer),
        PulseBizTypeEntry(bizType: .clientHeartbeat, name: "CLIENT_HEARTBEAT", direction: .clientToServer),
        PulseBizTypeEntry(bizType: .clientConfigPull, name: "CLIENT_CONFIG_PULL", direction: .clientToServer),
        PulseBizTypeEntry(
            bizType: .clientCrashBatchUpload, name: "CLIENT_CRASH_BATCH_UPLOAD", direction: .clientToServer),
        PulseBizTypeEntry(
            bizType: .clientEventBatchUpload, name: "CLIENT_EVENT_BATCH_UPLOAD", direction: .clientToServer),
        PulseBizTypeEntry(
            bizType: .clientAppUpdateCheck, name: "CLIENT_APP_UPDATE_CHECK", direction: .clientToServer),
        PulseBizTypeEntry(
            bizType: .bidirectionalControlRPC, name: "BIDIRECTIONAL_CONTROL_RPC", direction: .bidirectional),
    ])
}
