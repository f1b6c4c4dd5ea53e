public import PulseJSON

/// The complete `CLIENT_APP_UPDATE_CHECK` response payload, including the beta-migration root copy.
///
/// During the beta migration the server repeats the update fields at the root of the envelope so
/// already-built SDKs keep working:
/// `{"code":0,"msg":null,"data":{"action":"optional",...},"action":"optional",...}`.
/// Encoding writes `code`, `msg`, `data` and then, when `data` is present, the five update fields
/// again at the root. Decoding reads the envelope; the root copy is exposed as ``rootCopy`` for
/// diagnostics only. New code reads ``decision``, which fails open to "no update".
public struct UpdateCheckResponse: Sendable, Hashable {
    /// The envelope (`code`, `msg`, `data`).
    public let envelope: PulseEnvelope<UpdateCheckResult>
    /// The compatibility copy found at the root, or `nil` when the root has no `action` key.
    public let rootCopy: UpdateCheckResult?

    /// Wraps an envelope; the root copy is derived from its data.
    public init(envelope: PulseEnvelope<UpdateCheckResult>) {
        self.envelope = envelope
        self.rootCopy = envelope.data
    }

    /// The update decision a client acts on: the envelope's data on success, otherwise
    /// ``UpdateCheckResult/noUpdate``. Telemetry must never block the host app.
    public var decision: UpdateCheckResult {
        guard envelope.isSuccess, let data = envelope.data else {
            return .noUpdate
        }
        return data
    }
}

extension UpdateCheckResponse: PulseJSONCodable {
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        envelope = try PulseEnvelope<UpdateCheckResult>(jsonNode: node)
        rootCopy = node["action"] != nil ? try? UpdateCheckResult(jsonNode: node) : nil
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        envelope.writeFields(to: &writer)
        if let data = envelope.data {
            UpdateCheckResult.wire.writeMembers(data, to: &writer)
        }
        writer.endObject()
    }
}
