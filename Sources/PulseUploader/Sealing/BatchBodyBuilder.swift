import OTLPProtobuf
import PulseJSON

/// Builds an OTLP/HTTP JSON export request from queued record fragments.
///
/// Fragments are complete JSON objects written when each record was created; they are spliced in as they
/// are, so sealing never decodes a record. Records of one resource share one `resourceLogs` /
/// `resourceSpans` / `resourceMetrics` entry, in the order the resources first appear.
enum BatchBodyBuilder {
    /// The instrumentation scope of every record the uploader encodes.
    static let scopeName = "pulsegate.uploader"

    /// One resource's records within a batch.
    struct ResourceGroup {
        /// The resource's `attributes` array, already encoded.
        var attributes: [UInt8]
        /// The records' fragments, in queue order.
        var fragments: [[UInt8]]
    }

    static func build(signal: Signal, groups: [ResourceGroup]) -> [UInt8] {
        let (resourceKey, scopeKey, itemsKey): (String, String, String)
        switch signal {
        case .logs: (resourceKey, scopeKey, itemsKey) = ("resourceLogs", "scopeLogs", "logRecords")
        case .traces: (resourceKey, scopeKey, itemsKey) = ("resourceSpans", "scopeSpans", "spans")
        case .metrics: (resourceKey, scopeKey, itemsKey) = ("resourceMetrics", "scopeMetrics", "metrics")
        }
        var capacity = 256
        for group in groups {
            capacity += group.attributes.count + 128
            for fragment in group.fragments {
                capacity += fragment.count + 1
            }
        }
        var writer = JSONWriter(capacity: capacity)
        writer.beginObject()
        writer.key(resourceKey)
        writer.beginArray()
        for group in groups {
            writer.beginObject()
            writer.key("resource")
            writer.beginObject()
            writer.key("attributes")
            writer.raw(group.attributes)
            writer.endObject()
            writer.key(scopeKey)
            writer.beginArray()
            writer.beginObject()
            writer.key("scope")
            writer.beginObject()
            writer.key("name")
            writer.string(scopeName)
            writer.key("version")
            writer.string(ResourceIdentity.sdkVersion)
            writer.endObject()
            writer.key(itemsKey)
            writer.beginArray()
            for fragment in group.fragments { writer.raw(fragment) }
            writer.endArray()
            writer.endObject()
            writer.endArray()
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    /// The encoded `attributes` array of a resource.
    static func encodeResourceAttributes(_ attributes: [(String, AttributeValue)]) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        OTLPJSON.writeAttributes(attributes, to: &writer)
        return writer.bytes
    }
}
