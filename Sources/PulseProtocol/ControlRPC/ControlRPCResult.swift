public import PulseJSON

/// `BIDIRECTIONAL_CONTROL_RPC` (biz type 7) success data: the route-specific result, any JSON value,
/// carried as `data` of a ``PulseEnvelope``.
///
/// The value is written exactly as held (the fast codec keeps member order and number kinds).
public struct ControlRPCResult: Sendable, Hashable, PulseJSONCodable {
    /// The route-specific result.
    public var value: JSONValue

    /// Wraps a result value.
    public init(_ value: JSONValue) {
        self.value = value
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        value = node.value
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.value(value)
    }
}
