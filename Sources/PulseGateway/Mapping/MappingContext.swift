import PulseHashing

/// What the mapping needs to know about the HTTP request.
struct MappingContext: Sendable {
    /// The App ID (`Apsio-App-Id` or the default).
    var appID: String
    /// The HTTP batch id (`Apsio-Batch-Id`, or the body's SHA-256).
    var batchID: String
    /// When the gateway received the request, epoch milliseconds.
    var receivedAt: Int64
    /// `Apsio-Sent-At`, epoch milliseconds.
    var sentAt: Int64?
    /// Identity values from headers.
    var fallbacks: IdentityFallbacks
    /// The hex SHA-256 of the decoded body when the request is a conflicting batch (its batch id
    /// is already another body's); it joins the HTTP batch id in the Pulse batch ids and derived
    /// event ids, so the batch is delivered as its own. `nil` for every other batch.
    var conflictHash: String? = nil
    /// `Apsio-Batch-Sequence` (``DiagnosticsObservation/sequenceHeader``), as it arrived.
    var sequenceHeader: String? = nil

    /// Feeds the batch's identity (HTTP batch id, and the body hash of a conflicting batch) into
    /// a derived id.
    func updateBatchFields(_ hasher: inout SHA256) {
        hasher.updateField(batchID)
        if let conflictHash {
            hasher.updateField("conflict")
            hasher.updateField(conflictHash)
        }
    }

    /// The device clock offset applied to event timestamps, or `nil` when it is within the
    /// threshold (or unknown).
    var appliedClockOffset: Int64? {
        guard let sentAt else { return nil }
        let offset = receivedAt - sentAt
        return abs(offset) > OTLPMapper.clockOffsetThresholdMilliseconds ? offset : nil
    }
}
