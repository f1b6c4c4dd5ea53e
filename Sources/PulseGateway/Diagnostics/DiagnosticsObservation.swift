import PulseJSON

/// What one HTTP batch tells the gateway about its sender's delivery: the batch's sequence number and the
/// sender's latest diagnostics record (`docs/diagnostics.md`).
///
/// Read from the OTLP/JSON body after mapping (protobuf bodies are transcoded first, so both formats go
/// through this code) and committed with the batch, only when the batch is new.
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

    /// Reads the observation of a request; `nil` when it carries neither a sequence number nor a record, or
    /// when the sender cannot be identified.
    static func extract(
        _ root: JSONNode, signal: OTLPSignal, sequenceHeader: String?, fallbacks: IdentityFallbacks
    ) -> DiagnosticsObservation? {
        // A malformed header is ignored (the record's attribute, if any, is used instead).
        let headerSequence = sequenceHeader.flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        guard root.kind == .object, let resources = root[signal.resourceKey], resources.kind == .array else {
            return nil
        }
        var firstResource: JSONNode?
        var found: (resource: JSONNode, attributes: JSONNode)?
        search: for resource in resources.elements {
            if firstResource == nil { firstResource = resource }
            guard let scopes = resource[signal.scopeKey] else { continue }
            for scope in scopes.elements {
                if let attributes = recordAttributes(scope, signal: signal) {
                    found = (resource, attributes)
                    break search
                }
            }
        }
        guard headerSequence != nil || found != nil else { return nil }
        let attributes = ResourceIdentityAttributes(json: (found?.resource ?? firstResource)?["resource"])
        guard let (installationID, deviceID) = ResolvedIdentity.clientIDs(attributes, fallbacks: fallbacks) else {
            return nil
        }
        var observation = DiagnosticsObservation(
            installationID: String(installationID.prefix(128)), deviceID: String(deviceID.prefix(128)),
            sequence: headerSequence)
        if let attributes = found?.attributes {
            var writer = JSONWriter(capacity: 2_048)
            writer.beginObject()
            for entry in attributes.elements {
                guard let key = entry["key"]?.string else { continue }
                writer.key(key)
                AnyValue.write(entry["value"], into: &writer)
                let value = entry["value"]
                switch key {
                case sequenceAttribute:
                    if observation.sequence == nil, let number = AnyValue.int(value), number > 0 {
                        observation.sequence = number
                    }
                case counterPrefix + "batches_attempted": observation.attempted = AnyValue.int(value)
                case counterPrefix + "batches_sent_ok": observation.sentOK = AnyValue.int(value)
                case counterPrefix + "batches_with_errors": observation.sentWithErrors = AnyValue.int(value)
                default: break
                }
            }
            writer.endObject()
            observation.record = writer.bytes
        }
        return observation
    }

    /// The attributes of the first diagnostics record in `scope`, if it holds one.
    private static func recordAttributes(_ scope: JSONNode, signal: OTLPSignal) -> JSONNode? {
        switch signal {
        case .logs:
            guard let records = scope["logRecords"] else { return nil }
            for record in records.elements {
                if let name = record["eventName"]?.string, !name.isEmpty {
                    if name == recordName { return record["attributes"] }
                    continue
                }
                guard let attributes = record["attributes"] else { continue }
                for entry in attributes.elements where entry["key"]?.string == "event.name" {
                    if AnyValue.string(entry["value"]) == recordName { return attributes }
                }
            }
        case .traces:
            guard let spans = scope["spans"] else { return nil }
            for span in spans.elements where span["name"]?.string == recordName {
                return span["attributes"]
            }
        case .metrics:
            guard let metrics = scope["metrics"] else { return nil }
            for metric in metrics.elements where metric["name"]?.string == recordName {
                guard let points = metric["gauge"]?["dataPoints"] else { continue }
                for point in points.elements { return point["attributes"] }
            }
        }
        return nil
    }
}
