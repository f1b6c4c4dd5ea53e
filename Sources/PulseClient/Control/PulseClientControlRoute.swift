/// The BIDIRECTIONAL_CONTROL_RPC routes a ``PulseClientSession`` answers: its allowlist.
///
/// A server request for any other route, or for an allowlisted route without a registered handler,
/// gets code 404 and the connection stays open. Routes are append-only contracts.
///
/// | route | meaning | arguments | result |
/// | --- | --- | --- | --- |
/// | `telemetry.flush` | upload everything queued now instead of at the next scheduled time | none (ignored) | handler-defined, for example `{"flushed":12}` |
/// | `config.invalidate` | the applied configuration is stale: pull CLIENT_CONFIG_PULL again | optional `revision` (int64): the server's current revision | handler-defined, for example `true` |
package enum PulseClientControlRoute: String, Sendable, Hashable, CaseIterable {
    /// `telemetry.flush`: flush queued telemetry now.
    case telemetryFlush = "telemetry.flush"
    /// `config.invalidate`: pull the configuration again.
    case configInvalidate = "config.invalidate"

    /// The route as written on the wire.
    package var name: String { rawValue }
}
