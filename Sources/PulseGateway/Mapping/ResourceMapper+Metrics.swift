import PulseHashing
import PulseJSON
import PulseKit
import PulseProtocol

/// Metric data points to Pulse events.
extension ResourceMapper {
    /// The data member of a metric the mapper reads (the first of ``MetricData/all`` that has a
    /// `dataPoints` array) and its points; checks the metric's data members.
    static func dataPoints(of metric: JSONCursor) throws(MappingProblem) -> (MetricData, JSONCursor)? {
        var chosen: (MetricData, JSONCursor)?
        for data in MetricData.all {
            guard let body = metric[data.name], !body.isNull else { continue }
            if chosen == nil, let points = body["dataPoints"], points.kind == .array {
                try MappingWalk.enter(body, data.kind)
                chosen = (data, points)
            } else {
                try MappingWalk.check(skipped: body, data.kind)
            }
        }
        return chosen
    }

    mutating func mapDataPoint(
        _ point: JSONCursor, metric: JSONCursor, type: String, identity: ResolvedIdentity, module: String?,
        resourceAttributes: [UInt8], position: (Int, Int, Int), into collected: inout CollectedRecords
    ) throws(MappingProblem) {
        let name = metric["name"]?.string ?? ""
        let scan = try beginAttributes(point["attributes"])
        let pointAttributes = attributes.bytes
        attributes.key(verbatim: "metric.type")
        attributes.string(type)
        if let unit = metric["unit"]?.string, !unit.isEmpty {
            attributes.key(verbatim: "metric.unit")
            attributes.string(unit)
        }
        writeMetricValues(point, type: type)
        attributes.key(verbatim: "otlp.signal")
        attributes.string("metrics")
        let start = AnyValue.nanosToMillis(point["startTimeUnixNano"])
        let end = AnyValue.nanosToMillis(point["timeUnixNano"])
        let time = timestamp(deviceTime: end ?? start)
        attributes.endObject()

        let kind: PulseEventKind
        if let override = try self.kind(override: scan.kindOverride, resourceIndex: position.0) {
            kind = override
        } else if Self.runtimePrefixes.contains(where: { name.hasPrefix($0) }) {
            kind = .runtime
        } else {
            kind = .performance
        }
        var hasher = SHA256()
        hasher.updateField(name)
        hasher.update(resourceAttributes)
        hasher.update([0])
        hasher.update(pointAttributes)
        hasher.updateField(String(AnyValue.int64(point["startTimeUnixNano"]) ?? 0))
        hasher.updateField(String(AnyValue.int64(point["timeUnixNano"]) ?? 0))
        let id = name.isEmpty && end == nil ? derivedID(position) : Hex.encode(hasher.finalize())
        encodeEvent(
            id: id, timestamp: time, sessionID: scan.sessionID ?? identity.sessionID ?? "", kind: kind,
            name: name.isEmpty ? "metric" : name, module: module, imageUUID: scan.buildID ?? identity.buildID,
            into: &collected.events)
    }

    static let runtimePrefixes = ["process.runtime.", "runtime.", "jvm.", "dotnet.", "process."]

    mutating func writeMetricValues(_ point: JSONCursor, type: String) {
        if let value = point["asDouble"], let number = AnyValue.double(value) {
            attributes.key(verbatim: "metric.value")
            attributes.double(number)
        } else if let number = AnyValue.int64(point["asInt"]) {
            attributes.key(verbatim: "metric.value")
            attributes.int(number)
        }
        if let count = AnyValue.int64(point["count"]) {
            attributes.key(verbatim: "metric.count")
            attributes.int(count)
        }
        for (field, key) in [("sum", "metric.sum"), ("min", "metric.min"), ("max", "metric.max")] {
            if let number = AnyValue.double(point[field]) {
                attributes.key(key)
                attributes.double(number)
            }
        }
        if let counts = point["bucketCounts"], counts.kind == .array {
            attributes.key(verbatim: "metric.bucket_counts")
            attributes.beginArray()
            for count in counts.elements { attributes.int(AnyValue.int64(count) ?? 0) }
            attributes.endArray()
        }
        if let bounds = point["explicitBounds"], bounds.kind == .array {
            attributes.key(verbatim: "metric.explicit_bounds")
            attributes.beginArray()
            for bound in bounds.elements {
                if let number = AnyValue.double(bound) { attributes.double(number) } else { attributes.null() }
            }
            attributes.endArray()
        }
        if let scale = AnyValue.int64(point["scale"]) {
            attributes.key(verbatim: "metric.scale")
            attributes.int(scale)
        }
        if let zero = AnyValue.int64(point["zeroCount"]) {
            attributes.key(verbatim: "metric.zero_count")
            attributes.int(zero)
        }
        for (field, key) in [("positive", "metric.positive"), ("negative", "metric.negative")] {
            guard let buckets = point[field], buckets.kind == .object else { continue }
            attributes.key(key)
            attributes.beginObject()
            attributes.key(verbatim: "offset")
            attributes.int(AnyValue.int64(buckets["offset"]) ?? 0)
            attributes.key(verbatim: "bucketCounts")
            attributes.beginArray()
            if let counts = buckets["bucketCounts"] {
                for count in counts.elements { attributes.int(AnyValue.int64(count) ?? 0) }
            }
            attributes.endArray()
            attributes.endObject()
        }
        if let quantiles = point["quantileValues"], quantiles.kind == .array {
            attributes.key(verbatim: "metric.quantiles")
            attributes.beginArray()
            for quantile in quantiles.elements {
                attributes.beginObject()
                attributes.key(verbatim: "quantile")
                attributes.double(AnyValue.double(quantile["quantile"]) ?? 0)
                attributes.key(verbatim: "value")
                attributes.double(AnyValue.double(quantile["value"]) ?? 0)
                attributes.endObject()
            }
            attributes.endArray()
        }
    }
}
