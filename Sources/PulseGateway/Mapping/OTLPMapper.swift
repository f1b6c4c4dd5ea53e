import PulseJSON

/// Maps an OTLP/JSON export request to Pulse batches, as `docs/mapping.md` specifies.
///
/// Pure and deterministic: the same body, app, batch id and clock offset give byte-identical
/// drafts, so a replay produces the same Pulse batch ids and event ids.
enum OTLPMapper {
    /// Offsets up to this magnitude are treated as network delay and not applied.
    static let clockOffsetThresholdMilliseconds: Int64 = 5 * 60 * 1000

    /// Maps a parsed export request.
    ///
    /// - Parameter validating: checks every known member's JSON type first (``OTLPValidator``);
    ///   `false` only for the benchmark's before/after comparison.
    /// - Throws: ``IntakeRejection`` (400) for a request that is not an export request of
    ///   `signal`, a known member of the wrong JSON type, a resource without a required identity
    ///   value, or an unknown `apsio.event.kind`.
    static func map(
        _ root: JSONNode, signal: OTLPSignal, context: MappingContext, validating: Bool = true
    ) throws(IntakeRejection) -> MappedRequest {
        guard root.kind == .object else {
            throw IntakeRejection(.badRequest, "the body is not an OTLP export request (expected a JSON object)")
        }
        var result = MappedRequest(drafts: [], records: 0, rejected: 0)
        guard let resources = root[signal.resourceKey], !resources.isNull else { return result }
        guard resources.kind == .array else {
            throw IntakeRejection(.badRequest, "\(signal.resourceKey) must be an array")
        }
        if validating { try OTLPValidator.validate(root, signal: signal) }
        var mapper = ResourceMapper(signal: signal, context: context)
        for (resourceIndex, entry) in resources.elements.enumerated() {
            try mapper.map(entry, resourceIndex: resourceIndex, into: &result)
        }
        return result
    }
}
