/// The Pulse batches of one HTTP request.
struct MappedRequest: Sendable, Equatable {
    /// Outbox rows, in order: per resource its crash batches, then its event batches.
    var drafts: [OutboxDraft]
    /// Records (log records, spans, data points) in the request.
    var records: Int
    /// Records dropped because they are too large for a Pulse batch on their own.
    var rejected: Int
    /// The identities of resources with derived values (``ResolvedIdentity/derivation``), in
    /// resource order.
    var derivedIdentities: [ResolvedIdentity] = []
    /// What the request tells about its sender's delivery (``DiagnosticsObservation``), read in
    /// the same walk.
    var diagnostics: DiagnosticsObservation?

    /// The partial-success message, when records were rejected.
    func rejectionMessage(_ signal: OTLPSignal) -> String? {
        guard rejected > 0 else { return nil }
        return "\(rejected) \(signal.recordNoun)\(rejected == 1 ? "" : "s") dropped: larger than a Pulse batch"
            + " (65536 bytes of envelope) on its own"
    }
}
