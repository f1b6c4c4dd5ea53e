import OTLPProtobuf
import PulseHashing
import PulseJSON
import PulseProtocol

/// Maps resources one by one; keeps scratch buffers between records.
struct ResourceMapper {
    let signal: OTLPSignal
    let context: MappingContext
    let clockOffset: Int64?
    /// Reused per record: the attributes object.
    var attributes = JSONWriter(capacity: 2048)

    init(signal: OTLPSignal, context: MappingContext) {
        self.signal = signal
        self.context = context
        self.clockOffset = context.appliedClockOffset
    }

    /// Events and crash reports of one resource, in record order.
    struct Collected {
        var events: [[UInt8]] = []
        var crashes: [[UInt8]] = []
        var crashFallbacks: [[UInt8]] = []
    }

    mutating func map(_ entry: JSONNode, resourceIndex: Int, into result: inout MappedRequest) throws(IntakeRejection) {
        guard let scopes = entry[signal.scopeKey], scopes.kind == .array, scopes.count > 0 else { return }
        var identity: ResolvedIdentity?
        var collected = Collected()
        var resourceAttributes: [UInt8]?
        for (scopeIndex, scope) in scopes.elements.enumerated() {
            let module = scope["scope"]?["name"]?.string.flatMap { $0.isEmpty ? nil : $0 }
            switch signal {
            case .logs:
                guard let records = scope["logRecords"], records.count > 0 else { continue }
                if identity == nil { identity = try resolve(entry, resourceIndex) }
                for (recordIndex, record) in records.elements.enumerated() {
                    result.records += 1
                    try mapLogRecord(
                        record, identity: identity!, module: module,
                        position: (resourceIndex, scopeIndex, recordIndex), into: &collected)
                }
            case .traces:
                guard let spans = scope["spans"], spans.count > 0 else { continue }
                if identity == nil { identity = try resolve(entry, resourceIndex) }
                for (recordIndex, span) in spans.elements.enumerated() {
                    result.records += 1
                    try mapSpan(
                        span, identity: identity!, module: module, position: (resourceIndex, scopeIndex, recordIndex),
                        into: &collected)
                }
            case .metrics:
                guard let metrics = scope["metrics"], metrics.count > 0 else { continue }
                var pointIndex = 0
                for metric in metrics.elements {
                    guard let (type, points) = Self.dataPoints(of: metric), points.count > 0 else { continue }
                    if identity == nil { identity = try resolve(entry, resourceIndex) }
                    if resourceAttributes == nil { resourceAttributes = encodeResourceAttributes(entry) }
                    for point in points.elements {
                        result.records += 1
                        try mapDataPoint(
                            point, metric: metric, type: type, identity: identity!, module: module,
                            resourceAttributes: resourceAttributes!,
                            position: (resourceIndex, scopeIndex, pointIndex), into: &collected)
                        pointIndex += 1
                    }
                }
            }
        }
        guard let identity else { return }
        if identity.derivation != nil { result.derivedIdentities.append(identity) }
        emit(collected, identity: identity, resourceIndex: resourceIndex, into: &result)
    }

    private func resolve(_ entry: JSONNode, _ index: Int) throws(IntakeRejection) -> ResolvedIdentity {
        try ResolvedIdentity(
            resource: entry["resource"], index: index, appID: context.appID, fallbacks: context.fallbacks)
    }

    // MARK: - Batches

    private func emit(
        _ collected: Collected, identity: ResolvedIdentity, resourceIndex: Int, into result: inout MappedRequest
    ) {
        let identityJSON = identity.batchIdentityJSON()
        let connect = identity.connectPayload()
        let key = ResolvedIdentity.key(connectPayload: connect)
        let app = context.appID
        let mappingContext = context
        func draft(_ batch: BatchSplitter.Batch, kind: OutboxBatchKind, fallback: [UInt8]?) -> OutboxDraft {
            OutboxDraft(
                app: app, identityKey: key, identity: connect, kind: kind, pulseBatchID: batch.batchID,
                payload: batch.payload,
                compression: StoredPayload.compression(forPlaintextOf: batch.payload.count).rawValue,
                recordCount: batch.count, fallback: fallback)
        }
        if !collected.crashes.isEmpty {
            let (batches, dropped) = BatchSplitter.crashes.split(identity: identityJSON, items: collected.crashes) {
                PulseBatchID.make(mappingContext, resourceIndex: resourceIndex, chunk: $0, crash: true)
            }
            result.rejected += dropped
            for batch in batches {
                var fallback: [UInt8] = []
                for position in batch.range { EventChunks.append(collected.crashFallbacks[position], to: &fallback) }
                result.drafts.append(draft(batch, kind: .crashes, fallback: fallback))
            }
        }
        if !collected.events.isEmpty {
            let (batches, dropped) = BatchSplitter.events.split(identity: identityJSON, items: collected.events) {
                PulseBatchID.make(mappingContext, resourceIndex: resourceIndex, chunk: $0, crash: false)
            }
            result.rejected += dropped
            for batch in batches { result.drafts.append(draft(batch, kind: .events, fallback: nil)) }
        }
    }

    // MARK: - Attributes

    /// Writes the record's attributes (redacted) as members of the open attributes object and
    /// returns what the rules need.
    private mutating func writeAttributes(_ list: JSONNode?) -> RecordScan {
        var scan = RecordScan()
        guard let list else { return scan }
        for attribute in list.elements {
            guard let key = attribute["key"]?.string else { continue }
            let value = attribute["value"]
            var isURL = false
            if let role = RecordScan.roles[key] {
                switch role {
                case .dropped: continue
                case .url, .network(url: true): isURL = true
                default: break
                }
                scan.observe(role, value)
            }
            attributes.key(key)
            if Redaction.isSensitive(key) {
                attributes.string(Redaction.placeholder)
            } else if isURL, let url = AnyValue.string(value) {
                attributes.string(Redaction.strippingQueryAndFragment(url))
            } else {
                AnyValue.write(value, into: &attributes)
            }
        }
        return scan
    }

    private mutating func encodeResourceAttributes(_ entry: JSONNode) -> [UInt8] {
        attributes.reset()
        attributes.beginObject()
        _ = writeAttributes(entry["resource"]?["attributes"])
        attributes.endObject()
        return attributes.bytes
    }

    /// Adds the clock fields and returns the event timestamp for a device time.
    private mutating func timestamp(deviceTime: Int64?) -> Int64 {
        guard let deviceTime else { return context.receivedAt }
        guard let clockOffset else { return deviceTime }
        attributes.key("pulsegate.clock_offset_ms")
        attributes.int(clockOffset)
        attributes.key("pulsegate.device_time_ms")
        attributes.int(deviceTime)
        return deviceTime + clockOffset
    }

    private func kind(override: String?, resourceIndex: Int) throws(IntakeRejection) -> PulseEventKind? {
        guard let override else { return nil }
        guard let kind = PulseEventKind(rawValue: override) else {
            throw IntakeRejection(
                .badRequest,
                "resource \(resourceIndex): apsio.event.kind \"\(override.prefix(40))\" is not one of Analytics, Crash,"
                    + " Error, Log, Network, Performance, Runtime, Breadcrumb")
        }
        return kind
    }

    // MARK: - Logs

    private mutating func mapLogRecord(
        _ record: JSONNode, identity: ResolvedIdentity, module: String?, position: (Int, Int, Int),
        into collected: inout Collected
    ) throws(IntakeRejection) {
        attributes.reset()
        attributes.beginObject()
        let scan = writeAttributes(record["attributes"])
        if let body = record["body"], !body.isNull, body.count > 0 {
            attributes.key("log.body")
            AnyValue.write(body, into: &attributes)
        }
        let severity = AnyValue.enumValue(record["severityNumber"], names: OTLPEnum.severityNumber.names) ?? 0
        if severity > 0 {
            attributes.key("log.severity_number")
            attributes.int(severity)
        }
        if let text = record["severityText"]?.string, !text.isEmpty {
            attributes.key("log.severity_text")
            attributes.string(text)
        }
        if let trace = record["traceId"]?.string, !trace.isEmpty {
            attributes.key("trace_id")
            attributes.string(trace.lowercased())
        }
        if let span = record["spanId"]?.string, !span.isEmpty {
            attributes.key("span_id")
            attributes.string(span.lowercased())
        }
        attributes.key("otlp.signal")
        attributes.string("logs")
        let time = timestamp(
            deviceTime: AnyValue.nanosToMillis(record["timeUnixNano"])
                ?? AnyValue.nanosToMillis(record["observedTimeUnixNano"]))
        attributes.endObject()

        let eventName =
            scan.eventName.flatMap { $0.isEmpty ? nil : $0 }
            ?? record["eventName"]?.string.flatMap { $0.isEmpty ? nil : $0 }
        let kind: PulseEventKind
        if let override = try self.kind(override: scan.kindOverride, resourceIndex: position.0) {
            kind = override
        } else if scan.crashID != nil || eventName == "device.crash" {
            kind = .crash
        } else if let eventName, eventName.hasPrefix("breadcrumb.") {
            kind = .breadcrumb
        } else if eventName == "pulsegate.diagnostics" {
            kind = .runtime
        } else if eventName != nil {
            kind = .analytics
        } else if severity >= 17 || scan.exceptionType != nil {
            kind = .error
        } else {
            kind = .log
        }
        let sessionID = scan.sessionID ?? identity.sessionID ?? ""
        let imageUUID = scan.buildID ?? identity.buildID
        if let crashID = scan.crashID, !crashID.isEmpty {
            let id = "crash-" + SHA256.hexDigest(Array(crashID.utf8))
            collected.crashFallbacks.append(
                encodeEvent(
                    id: id, timestamp: time, sessionID: sessionID, kind: .crash, name: eventName ?? "crash",
                    module: module, imageUUID: imageUUID))
            collected.crashes.append(
                encodeCrash(
                    crashID: crashID, timestamp: time, sessionID: scan.sessionID ?? identity.sessionID, scan: scan,
                    body: record["body"], identity: identity))
            return
        }
        let id: String
        if let uid = scan.logRecordUID, !uid.isEmpty {
            id = Self.fitted(uid)
        } else {
            id = derivedID(position)
        }
        let name = eventName ?? (kind == .crash ? "crash" : "log")
        collected.events.append(
            encodeEvent(
                id: id, timestamp: time, sessionID: sessionID, kind: kind, name: name, module: module,
                imageUUID: imageUUID))
    }

    // MARK: - Spans

    private mutating func mapSpan(
        _ span: JSONNode, identity: ResolvedIdentity, module: String?, position: (Int, Int, Int),
        into collected: inout Collected
    ) throws(IntakeRejection) {
        attributes.reset()
        attributes.beginObject()
        let scan = writeAttributes(span["attributes"])
        let traceID = span["traceId"]?.string?.lowercased() ?? ""
        let spanID = span["spanId"]?.string?.lowercased() ?? ""
        if !traceID.isEmpty {
            attributes.key("trace_id")
            attributes.string(traceID)
        }
        if !spanID.isEmpty {
            attributes.key("span_id")
            attributes.string(spanID)
        }
        if let parent = span["parentSpanId"]?.string, !parent.isEmpty {
            attributes.key("span.parent_span_id")
            attributes.string(parent.lowercased())
        }
        // Zero is the proto3 default (unspecified / unset): an explicit `"kind":0` or
        // `"status":{"code":0}` maps like an omitted one, as it must for protobuf, where a default
        // value is never on the wire.
        let spanKind = Self.spanKind(span["kind"])
        if let spanKind, spanKind != 0 {
            attributes.key("span.kind")
            attributes.int(spanKind)
        }
        if var end = AnyValue.nanosToMillis(span["endTimeUnixNano"]) {
            if let clockOffset { end += clockOffset }
            attributes.key("span.end_time_ms")
            attributes.int(end)
        }
        if let code = AnyValue.enumValue(span["status"]?["code"], names: OTLPEnum.statusCode.names),
            code != 0
        {
            attributes.key("span.status_code")
            attributes.int(code)
        }
        attributes.key("otlp.signal")
        attributes.string("traces")
        let time = timestamp(deviceTime: AnyValue.nanosToMillis(span["startTimeUnixNano"]))
        attributes.endObject()

        let kind: PulseEventKind
        if let override = try self.kind(override: scan.kindOverride, resourceIndex: position.0) {
            kind = override
        } else if scan.networkMarker || spanKind == 3 {
            kind = .network
        } else {
            kind = .performance
        }
        let id: String
        if Self.isHexID(traceID, length: 32), Self.isHexID(spanID, length: 16) {
            id = traceID + spanID
        } else {
            id = derivedID(position)
        }
        let name = span["name"]?.string.flatMap { $0.isEmpty ? nil : $0 } ?? "span"
        collected.events.append(
            encodeEvent(
                id: id, timestamp: time, sessionID: scan.sessionID ?? identity.sessionID ?? "", kind: kind, name: name,
                module: module, imageUUID: scan.buildID ?? identity.buildID))
    }

    /// OTLP span kind: the enum as an integer (or its name, which some encoders write).
    static func spanKind(_ node: JSONNode?) -> Int64? {
        guard let node else { return nil }
        if let number = node.int64 { return number }
        switch node.string {
        case "SPAN_KIND_UNSPECIFIED": return 0
        case "SPAN_KIND_INTERNAL": return 1
        case "SPAN_KIND_SERVER": return 2
        case "SPAN_KIND_CLIENT": return 3
        case "SPAN_KIND_PRODUCER": return 4
        case "SPAN_KIND_CONSUMER": return 5
        default: return nil
        }
    }

    static func isHexID(_ text: String, length: Int) -> Bool {
        guard text.utf8.count == length else { return false }
        var nonZero = false
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0"): continue
            case UInt8(ascii: "1")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): nonZero = true
            default: return false
            }
        }
        return nonZero
    }

    // MARK: - Metrics

    static let metricTypes = ["gauge", "sum", "histogram", "exponentialHistogram", "summary"]

    static func dataPoints(of metric: JSONNode) -> (String, JSONNode)? {
        for type in metricTypes {
            if let body = metric[type], let points = body["dataPoints"], points.kind == .array {
                return (type, points)
            }
        }
        return nil
    }

    private mutating func mapDataPoint(
        _ point: JSONNode, metric: JSONNode, type: String, identity: ResolvedIdentity, module: String?,
        resourceAttributes: [UInt8], position: (Int, Int, Int), into collected: inout Collected
    ) throws(IntakeRejection) {
        let name = metric["name"]?.string ?? ""
        attributes.reset()
        attributes.beginObject()
        let scan = writeAttributes(point["attributes"])
        let pointAttributes = attributes.bytes
        attributes.key("metric.type")
        attributes.string(type)
        if let unit = metric["unit"]?.string, !unit.isEmpty {
            attributes.key("metric.unit")
            attributes.string(unit)
        }
        writeMetricValues(point, type: type)
        attributes.key("otlp.signal")
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
        collected.events.append(
            encodeEvent(
                id: id, timestamp: time, sessionID: scan.sessionID ?? identity.sessionID ?? "", kind: kind,
                name: name.isEmpty ? "metric" : name, module: module, imageUUID: scan.buildID ?? identity.buildID))
    }

    static let runtimePrefixes = ["process.runtime.", "runtime.", "jvm.", "dotnet.", "process."]

    private mutating func writeMetricValues(_ point: JSONNode, type: String) {
        if let value = point["asDouble"], let number = AnyValue.double(value) {
            attributes.key("metric.value")
            attributes.double(number)
        } else if let number = AnyValue.int64(point["asInt"]) {
            attributes.key("metric.value")
            attributes.int(number)
        }
        if let count = AnyValue.int64(point["count"]) {
            attributes.key("metric.count")
            attributes.int(count)
        }
        for (field, key) in [("sum", "metric.sum"), ("min", "metric.min"), ("max", "metric.max")] {
            if let number = AnyValue.double(point[field]) {
                attributes.key(key)
                attributes.double(number)
            }
        }
        if let counts = point["bucketCounts"], counts.kind == .array {
            attributes.key("metric.bucket_counts")
            attributes.beginArray()
            for count in counts.elements { attributes.int(AnyValue.int64(count) ?? 0) }
            attributes.endArray()
        }
        if let bounds = point["explicitBounds"], bounds.kind == .array {
            attributes.key("metric.explicit_bounds")
            attributes.beginArray()
            for bound in bounds.elements {
                if let number = AnyValue.double(bound) { attributes.double(number) } else { attributes.null() }
            }
            attributes.endArray()
        }
        if let scale = AnyValue.int64(point["scale"]) {
            attributes.key("metric.scale")
            attributes.int(scale)
        }
        if let zero = AnyValue.int64(point["zeroCount"]) {
            attributes.key("metric.zero_count")
            attributes.int(zero)
        }
        for (field, key) in [("positive", "metric.positive"), ("negative", "metric.negative")] {
            guard let buckets = point[field], buckets.kind == .object else { continue }
            attributes.key(key)
            attributes.beginObject()
            attributes.key("offset")
            attributes.int(AnyValue.int64(buckets["offset"]) ?? 0)
            attributes.key("bucketCounts")
            attributes.beginArray()
            if let counts = buckets["bucketCounts"] {
                for count in counts.elements { attributes.int(AnyValue.int64(count) ?? 0) }
            }
            attributes.endArray()
            attributes.endObject()
        }
        if let quantiles = point["quantileValues"], quantiles.kind == .array {
            attributes.key("metric.quantiles")
            attributes.beginArray()
            for quantile in quantiles.elements {
                attributes.beginObject()
                attributes.key("quantile")
                attributes.double(AnyValue.double(quantile["quantile"]) ?? 0)
                attributes.key("value")
                attributes.double(AnyValue.double(quantile["value"]) ?? 0)
                attributes.endObject()
            }
            attributes.endArray()
        }
    }

    // MARK: - Encoding

    /// A Pulse event with the current attributes object.
    private func encodeEvent(
        id: String, timestamp: Int64, sessionID: String, kind: PulseEventKind, name: String, module: String?,
        imageUUID: String?
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: attributes.count + 160)
        writer.pulseEvent(
            id: id, timestamp: timestamp, sessionId: sessionID, kind: kind, name: name, module: module,
            imageUuid: imageUUID
        ) { $0.raw(attributes.bytes) }
        return writer.bytes
    }

    /// A crash report (`CrashReport` of `docs/wire-protocol.md` §7.4) with the current attributes.
    private func encodeCrash(
        crashID: String, timestamp: Int64, sessionID: String?, scan: RecordScan, body: JSONNode?,
        identity: ResolvedIdentity
    ) -> [UInt8] {
        var imageUUIDs = scan.imageUUIDs
        if imageUUIDs.isEmpty, let build = scan.buildID ?? identity.buildID, Int64(build) == nil {
            imageUUIDs = [build]
        }
        let build = CrashBuild(
            appVersion: identity.appVersion, buildNumber: identity.buildNumber, imageUuids: imageUUIDs,
            osVersion: identity.osVersion, architecture: identity.architecture)
        var writer = JSONWriter(capacity: attributes.count + 400)
        writer.pulseCrashReport(
            crashId: crashID, timestamp: timestamp, sessionId: sessionID, signal: scan.crashSignal,
            exceptionType: scan.exceptionType, message: scan.exceptionMessage ?? body?["stringValue"]?.string,
            // The OTLP stack trace is one string (`exception.stacktrace`), not frames.
            stack: { writer in
                if let stack = scan.exceptionStacktrace { writer.string(stack) } else { writer.null() }
            }, build: build, attachments: { _ in }, attributes: { $0.raw(attributes.bytes) })
        return writer.bytes
    }

    // MARK: - Ids

    /// SHA-256 of (app id, batch id, resource index, scope index, record index); a conflicting
    /// batch adds `conflict` and its body hash after the batch id.
    private func derivedID(_ position: (Int, Int, Int)) -> String {
        var hasher = SHA256()
        hasher.updateField(context.appID)
        context.updateBatchFields(&hasher)
        hasher.updateField(String(position.0))
        hasher.updateField(String(position.1))
        hasher.updateField(String(position.2))
        return Hex.encode(hasher.finalize())
    }

    /// An id as it arrived, or its SHA-256 when longer than 128 characters.
    static func fitted(_ id: String) -> String {
        id.utf8.count <= 128 ? id : SHA256.hexDigest(Array(id.utf8))
    }
}
