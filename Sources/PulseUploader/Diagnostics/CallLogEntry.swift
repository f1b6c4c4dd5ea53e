import PulseProtocol

/// One uploader API call and its outcome, kept at ``DiagnosticsLevel/callDetails`` and above.
public struct CallLogEntry: Sendable, Equatable {
    /// When the call returned (epoch ms).
    public var atMilliseconds: Int64
    /// The API, e.g. `record(event)`, `flush()`, `apply(policy:)`.
    public var call: String
    /// `ok`, `ok: <detail>` or `error: <code>: <message>`.
    public var outcome: String
    /// The caller's stack (at most 16 frames), at ``DiagnosticsLevel/callDetailsAndStackTraces``.
    public var stack: [String]?
}
