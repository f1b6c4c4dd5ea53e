public import PulseJSON
public import PulseKit

/// `BIDIRECTIONAL_CONTROL_RPC` (biz type 7) request: `{"route":"telemetry.flush","args":{},"schemaVersion":1}`.
///
/// Wire keys in canonical order: `route` (required, a well-formed ``ControlRoute``), `args` (an
/// object of route-specific arguments, default `{}`), `schemaVersion` (default 1). The result is
/// route-specific and travels as a ``ControlRPCResult`` in a ``PulseEnvelope``; a route the receiver does not
/// allowlist gets code 404 and the connection stays open.
public struct ControlRPCRequest: Sendable, Hashable, PulseJSONCodable {
    /// The route to invoke.
    public var route: ControlRoute
    /// Route-specific arguments in document order.
    public var args: [JSONMember]
    /// The version of the route's argument schema.
    public var schemaVersion: Int

    /// Creates a request.
    public init(route: ControlRoute, args: [JSONMember] = [], schemaVersion: Int = 1) {
        self.route = route
        self.args = args
        self.schemaVersion = schemaVersion
    }

    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        let name: String = try o.value("route")
        guard let route = ControlRoute(name) else {
            throw PulseProtocolError(
                .invalidValue,
                "route: \(PulseProtocolError.quoted(name)) is not a lower-case dotted name")
        }
        self.route = route
        args = try o.members("args")
        schemaVersion = try o.nullable("schemaVersion") ?? 1
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("route", route.name)
        writer.key("args")
        writer.value(.object(args))
        writer.field("schemaVersion", schemaVersion)
        writer.endObject()
    }
}
