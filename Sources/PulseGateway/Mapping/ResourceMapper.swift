import MsgTrans
import OTLPProtobuf
import PulseHTTP
import PulseJSON

/// The one walk over a parsed export request, resource by resource: checks each member's JSON
/// type as it reads it (``MappingWalk``), maps the records to Pulse events and crash reports,
/// redacts, derives ids, and notes the diagnostics record (``DiagnosticsFinding``). Keeps scratch
/// buffers between records.
struct ResourceMapper {
    /// The request the walk reads (through cursors, ``JSONCursor``), for the nodes it keeps.
    let document: JSONNode
    let signal: OTLPSignal
    let context: MappingContext
    let clockOffset: Int64?
    let kinds: (resource: MessageKind, scope: MessageKind, record: MessageKind)
    /// Reused per record: the attributes object.
    var attributes = JSONWriter(capacity: 2048)
    /// The first resource entry, and the search for the diagnostics record.
    var firstResource: JSONCursor?
    var diagnostics = DiagnosticsFinding.Search()
    /// The identity attributes the walk collected for the first resource and for the resource
    /// holding the diagnostics record (`nil` when it resolved no identity for it), which the
    /// diagnostics observation reads instead of collecting them again.
    var firstResourceIdentity: ResourceIdentityAttributes?
    var diagnosticsIdentity: ResourceIdentityAttributes?

    init(document: JSONNode, signal: OTLPSignal, context: MappingContext) {
        self.document = document
        self.signal = signal
        self.context = context
        self.clockOffset = context.appliedClockOffset
        self.kinds = MappingWalk.kinds(signal)
    }

    /// Maps one resource entry (the caller checked that it is an object).
    mutating func map(_ entry: JSONCursor, resourceIndex: Int, into result: inout MappedRequest)
        throws(MappingProblem)
    {
        let isFirst = firstResource == nil
        if isFirst { firstResource = entry }
        let searching = diagnostics.found == nil
        try MappingWalk.enter(entry, kinds.resource)
        guard let scopes = entry[signal.scopeKey], scopes.kind == .array, scopes.count > 0 else { return }
        var identity: ResolvedIdentity?
        var identityAttributes: ResourceIdentityAttributes?
        var collected = CollectedRecords()
        var resourceAttributes: [UInt8]?
        for (scopeIndex, scope) in scopes.elements.enumerated() {
            try MappingWalk.enter(element: scope, kinds.scope)
            diagnostics.nextScope()
            let module = scope["scope"]?["name"]?.string.flatMap { $0.isEmpty ? nil : $0 }
            switch signal {
            case .logs:
                guard let records = scope["logRecords"], records.count > 0 else { continue }
                if identity == nil { identity = try resolve(entry, resourceIndex, &identityAttributes) }
                let resolved = identity!
                for (recordIndex, record) in records.elements.enumerated() {
                    try MappingWalk.check(element: record)
                    let fields = try MappingWalk.fields(of: record, .logRecord)
                    result.records += 1
                    let place = RecordPlace(
                        module: module, resource: entry, position: (resourceIndex, scopeIndex, recordIndex))
                    try mapLogRecord(fields, of: resolved, at: place, into: &collected)
                }
            case .traces:
                guard let spans = scope["spans"], spans.count > 0 else { continue }
                if identity == nil { identity = try resolve(entry, resourceIndex, &identityAttributes) }
                let resolved = identity!
                for (recordIndex, span) in spans.elements.enumerated() {
                    try MappingWalk.enter(element: span, .span)
                    result.records += 1
                    let place = RecordPlace(
                        module: module, resource: entry, position: (resourceIndex, scopeIndex, recordIndex))
                    try mapSpan(span, of: resolved, at: place, into: &collected)
                }
            case .metrics:
                guard let metrics = scope["metrics"], metrics.count > 0 else { continue }
                var pointIndex = 0
                for metric in metrics.elements {
                    try MappingWalk.enter(element: metric, .metric)
                    guard let (type, points) = try Self.dataPoints(of: metric), points.count > 0 else { continue }
                    if identity == nil { identity = try resolve(entry, resourceIndex, &identityAttributes) }
                    if resourceAttributes == nil { resourceAttributes = try encodeResourceAttributes(entry) }
                    // The diagnostics record is a gauge; its first point carries the attributes.
                    let diagnosticsGauge =
                        type.name == "gauge" && metric["name"]?.stringEquals(DiagnosticsObservation.recordName) == true
                    for point in points.elements {
                        try MappingWalk.enter(element: point, type.point)
                        if diagnosticsGauge { diagnostics.named(point["attributes"], resource: entry, of: document) }
                        result.records += 1
                        try mapDataPoint(
                            point, metric: metric, type: type.name, identity: identity!, module: module,
                            resourceAttributes: resourceAttributes!,
                            position: (resourceIndex, scopeIndex, pointIndex), into: &collected)
                        pointIndex += 1
                    }
                }
            }
        }
        if isFirst { firstResourceIdentity = identityAttributes }
        if searching, diagnostics.found != nil { diagnosticsIdentity = identityAttributes }
        guard let identity else { return }
        if identity.derivation != nil { result.derivedIdentities.append(identity) }
        emit(collected, identity: identity, resourceIndex: resourceIndex, into: &result)
    }

    /// The identity of resource `entry`, and (in `attributes`) the attributes it was resolved from.
    private func resolve(
        _ entry: JSONCursor, _ index: Int, _ attributes: inout ResourceIdentityAttributes?
    ) throws(MappingProblem) -> ResolvedIdentity {
        let collected = ResourceIdentityAttributes(resource: entry["resource"])
        attributes = collected
        do {
            return try ResolvedIdentity(
                attributes: collected, index: index, appID: context.appID, fallbacks: context.fallbacks)
        } catch {
            throw .rejected(error)
        }
    }
}
