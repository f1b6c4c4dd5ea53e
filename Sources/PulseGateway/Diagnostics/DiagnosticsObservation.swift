import OTLPProtobuf
import PulseJSON

/// What one HTTP batch tells the gateway about its sender's delivery: the batch's sequence number and the
/// sender's latest diagnostics record (`docs/diagnostics.md`).
///
/// Found by the mapping walk (``ResourceMapper``, the same for OTLP/JSON and for protobuf bodies, which
/// are decoded into the same document) and committed with the batch, only when the batch is new.
struct DiagnosticsObservation: Sendable, Equatable {
    /// The record's event, span and metric name.
    static let recordName = "pulsegate.diagnostics"
    /// The header carrying the batch's sequence number.
    static let sequenceHeader = "Apsio-Batch-Sequence"
    /// The attribute carrying the sequence number inside the record.
    static let sequenceAttribute = "pulsegate.batch.sequence"
    private static let counterPrefix = "pulsegate.diagnostics."

    /// The sender's installation id (``ResolvedIdentity/clientIDs(_:fallbacks:)``: never derived, so
    /// the sequences of different processes are not mixed).
    var installationID: String
    /// The sender's device id (the same rules).
    var deviceID: String
    /// The batch's sequence number (header, else the record's attribute).
    var sequence: Int64?
    /// The record's attributes as one flat JSON object (`{"pulsegate.diagnostics.batches_attempted":12,…}`).
    var record: [UInt8]?
    /// `batches_attempted`, `batches_sent_ok`, `batches_with_errors` of the record.
    var attempted: Int64?
    var sentOK: Int64?
    var sentWithErrors: Int64?
}

extension DiagnosticsObservation {
    /// The observation of a request whose walk found `finding` (the first diagnostics record, if any);
    /// `nil` when it carries neither a sequence number nor a record, or when the sender cannot be
    /// identified (by the record's resource, else the request's first resource). `identity` is that
    /// resource's identity attributes when the walk already collected them; otherwise they are
    /// collected here.
    init?(
        _ finding: DiagnosticsFinding?, firstResource: JSONNode?, identity: ResourceIdentityAttributes?,
        sequenceHeader: String?, fallbacks: IdentityFallbacks
    ) {
        // A malformed header is ignored (the record's attribute, if any, is used instead).
        let headerSequence = sequenceHeader.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        guard headerSequence != nil || finding != nil else { return nil }
        let attributes = identity ?? ResourceIdentityAttributes(json: (finding?.resource ?? firstResource)?["resource"])
        guard let (installationID, deviceID) = ResolvedIdentity.clientIDs(attributes, fallbacks: fallbacks) else {
            return nil
        }
        // At most 128 characters; an id of at most 128 bytes has no more (and is not walked).
        self.installationID = installationID.utf8.count <= 128 ? installationID : String(installationID.prefix(128))
        self.deviceID = deviceID.utf8.count <= 128 ? deviceID : String(deviceID.prefix(128))
        sequence = headerSequence
        guard let attributes = finding?.attributes else { return }
        var writer = JSONWriter(capacity: 2_048)
        writer.beginObject()
        for entry in attributes.elements {
            guard let key = entry["key"]?.string else { continue }
            writer.key(key)
            let value = entry["value"]
            // The walk checked the record's types, so writing it again cannot fail.
            do { try AnyValue.write(value, into: &writer) } catch { writer.null() }
            switch key {
            case Self.sequenceAttribute:
                if sequence == nil, let number = AnyValue.int(value), number > 0 { sequence = number }
            case Self.counterPrefix + "batches_attempted": attempted = AnyValue.int(value)
            case Self.counterPrefix + "batches_sent_ok": sentOK = AnyValue.int(value)
            case Self.counterPrefix + "batches_with_errors": sentWithErrors = AnyValue.int(value)
            default: break
            }
        }
        writer.endObject()
        record = writer.bytes
    }
}
