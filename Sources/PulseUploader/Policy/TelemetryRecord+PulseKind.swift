public import PulseProtocol

extension TelemetryRecord {
    /// The Pulse event kind the gateway will give this record (the rules of `docs/mapping.md`): the policy's
    /// `sampling` and `collectKinds` are keyed by it.
    ///
    /// An `apsio.event.kind` attribute naming a kind wins (except for crash reports, always `Crash`); then
    /// crash reports → `Crash`; events (also exits, session summaries and attachments, which are events) →
    /// `Breadcrumb` for names starting with `breadcrumb.`, else `Analytics`; logs → `Error` at severity ERROR
    /// or above or with an `exception.type` attribute, else `Log`; spans → `Network` for client spans and
    /// spans with HTTP, RPC or database attributes, else `Performance`; metric points → `Runtime` for
    /// runtime/process metric names, else `Performance`.
    public var pulseKind: PulseEventKind {
        if case .crash = self { return .crash }
        if case .string(let name)? = attributes["apsio.event.kind"], let kind = PulseEventKind(rawValue: name) {
            return kind
        }
        switch self {
        case .crash:
            return .crash
        case .event(let entry):
            if entry.name == "device.crash" { return .crash }
            if entry.name.hasPrefix("breadcrumb.") { return .breadcrumb }
            return .analytics
        case .exit, .sessionSummary, .attachment:
            return .analytics
        case .log(let entry):
            if entry.severity.rawValue >= Severity.error.rawValue || entry.attributes["exception.type"] != nil {
                return .error
            }
            return .log
        case .span(let span):
            let network = ["http.request.method", "http.method", "url.full", "http.url", "rpc.system", "db.system"]
            if span.kind == .client || network.contains(where: { span.attributes[$0] != nil }) { return .network }
            return .performance
        case .metric(let point):
            let runtime = ["process.runtime.", "runtime.", "jvm.", "dotnet.", "process."]
            return runtime.contains(where: { point.name.hasPrefix($0) }) ? .runtime : .performance
        }
    }

    private var attributes: [String: AttributeValue] {
        switch self {
        case .log(let entry): return entry.attributes
        case .event(let entry): return entry.attributes
        case .crash(let report): return report.attributes
        case .span(let span): return span.attributes
        case .metric(let point): return point.attributes
        case .exit(let exit): return exit.attributes
        case .sessionSummary(let summary): return summary.attributes
        case .attachment(let attachment): return attachment.attributes
        }
    }
}
