import OTLPProtobuf
import PulseHTTP
import PulseJSON

/// Maps an OTLP/JSON export request to Pulse batches, as `docs/mapping.md` specifies.
///
/// Pure and deterministic: the same body, app, batch id and clock offset give byte-identical
/// drafts, so a replay produces the same Pulse batch ids and event ids.
enum OTLPMapper {
    /// Offsets up to this magnitude are treated as network delay and not applied.
    static let clockOffsetThresholdMilliseconds: Int64 = 5 * 60 * 1000

    /// Maps a parsed export request in one walk (``ResourceMapper``): the JSON type checks of
    /// ``OTLPValidator``, the mapping, redaction, id derivation and the diagnostics observation.
    ///
    /// - Throws: ``IntakeRejection`` (400) for a request that is not an export request of
    ///   `signal`, a known member of the wrong JSON type, a resource without a required identity
    ///   value, or an unknown `apsio.event.kind`. A wrongly typed member anywhere in the request
    ///   wins over the mapping's own rejections, and the first one in document order is named,
    ///   as when the type checks ran before the mapping.
    static func map(
        _ root: JSONNode, signal: OTLPSignal, context: MappingContext
    ) throws(IntakeRejection) -> MappedRequest {
        guard root.kind == .object else {
            throw IntakeRejection(.badRequest, "the body is not an OTLP export request (expected a JSON object)")
        }
        guard let resources = root[signal.resourceKey], !resources.isNull else {
            return MappedRequest(drafts: [], records: 0, rejected: 0)
        }
        guard resources.kind == .array else {
            throw IntakeRejection(.badRequest, "\(signal.resourceKey) must be an array")
        }
        do {
            return try walk(root, resources: resources, signal: signal, context: context)
        } catch {
            // The walk stopped at the first problem it met; the request's first wrongly typed
            // member in document order, if any, is the answer (a rejected request only).
            try OTLPValidator.validate(root, signal: signal)
            switch error {
            case .rejected(let rejection): throw rejection
            case .invalid(let failure): throw IntakeRejection(.badRequest, failure.description)
            }
        }
    }

    /// The walk over a request whose `resources` member is an array. It reads the document through
    /// ``JSONCursor``s (no reference counting per value), keeping the document alive meanwhile.
    static func walk(
        _ root: JSONNode, resources: JSONNode, signal: OTLPSignal, context: MappingContext
    ) throws(MappingProblem) -> MappedRequest {
        var result = MappedRequest(drafts: [], records: 0, rejected: 0)
        var mapper = ResourceMapper(document: root, signal: signal, context: context)
        try root.withCursor { (request) throws(MappingProblem) in
            try MappingWalk.enter(request, .request(signal))
            for (resourceIndex, entry) in JSONCursor(inDocumentOf: request, at: resources.place).elements.enumerated() {
                try MappingWalk.check(element: entry)
                try mapper.map(entry, resourceIndex: resourceIndex, into: &result)
            }
        }
        result.diagnostics = DiagnosticsObservation(
            mapper.diagnostics.found, firstResource: mapper.firstResource.map { JSONNode(inDocumentOf: root, at: $0) },
            identity: mapper.diagnostics.found == nil ? mapper.firstResourceIdentity : mapper.diagnosticsIdentity,
            sequenceHeader: context.sequenceHeader, fallbacks: context.fallbacks)
        return result
    }
}
