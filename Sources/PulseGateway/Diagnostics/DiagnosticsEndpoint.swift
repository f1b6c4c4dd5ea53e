import PulseHTTP
import PulseJSON
import PulseKit

/// `GET /v1/diagnostics?app=<appId>`: per installation of the app, what the gateway received and what the
/// uploader says it attempted (`docs/diagnostics.md`; 400 without a valid `app`, 403/401 as for uploads).
struct DiagnosticsEndpoint: Sendable {
    let store: any GatewayStoring
    let clock: PulseClock
    let policy: GatewayPolicy

    /// The route.
    static let path = "/v1/diagnostics"

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        guard request.method == .get || request.method == .head else {
            return GatewayIntake.onlyGetAllowed(request)
        }
        guard let app = request.queryValue("app"), IntakeHeaders.isValidIdentifier(app) else {
            return GatewayIntake.errorResponse(IntakeRejection(.badRequest, "query parameter app is required"))
        }
        do {
            try IntakeHeaders.authorize(app: app, headers: request.headers, policy: policy)
        } catch {
            return GatewayIntake.errorResponse(error)
        }
        let devices: [(app: String, device: DiagnosticsLedger.Device)]
        do {
            devices = try await store.diagnosticsDevices(app: app, records: true)
        } catch {
            return GatewayIntake.errorResponse(
                IntakeRejection(
                    .serviceUnavailable, "storage is unavailable; retry later",
                    retryAfterSeconds: policy.retryAfterSeconds))
        }
        let now = clock.wallClockMilliseconds()
        let grace = Int64(policy.diagnosticsGapGraceSeconds) * 1_000
        var body = JSONWriter(capacity: 1_024)
        var devicesWithGaps = 0
        var missingTotal: Int64 = 0
        var entries = JSONWriter(capacity: 1_024)
        entries.beginArray()
        for (_, device) in devices {
            let gaps = DiagnosticsLedger.gaps(device.received, now: now, graceMilliseconds: grace)
            let missing = gaps.missing.reduce(Int64(0)) { $0 + $1.count }
            if missing > 0 { devicesWithGaps += 1 }
            missingTotal += missing
            Self.write(device, gaps: gaps, missing: missing, into: &entries)
        }
        entries.endArray()
        body.beginObject()
        body.field("app", app)
        body.field("generatedAtMs", now)
        body.field("gapGraceSeconds", policy.diagnosticsGapGraceSeconds)
        body.field("devicesWithGaps", devicesWithGaps)
        body.field("missingTotal", missingTotal)
        body.key("devices")
        body.raw(entries.bytes)
        body.endObject()
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "no-cache"],
            body: request.method == .head ? [] : body.bytes)
    }

    private static func write(
        _ device: DiagnosticsLedger.Device,
        gaps: (missing: [DiagnosticsLedger.MissingRange], pending: [DiagnosticsLedger.MissingRange]), missing: Int64,
        into writer: inout JSONWriter
    ) {
        func ranges(_ key: String, _ list: [DiagnosticsLedger.MissingRange]) {
            writer.objects(key, list) { writer, range in
                writer.field("from", range.from)
                writer.field("to", range.to)
            }
        }
        writer.beginObject()
        writer.field("installationId", device.installationID)
        writer.field("deviceId", device.deviceID)
        writer.field("firstSeenMs", device.firstSeen)
        writer.field("lastSeenMs", device.lastSeen)
        writer.field("batchesReceived", device.batchesReceived)
        writer.field("highestSequence", device.highestSequence)
        ranges("missingRanges", gaps.missing)
        writer.field("missingTotal", missing)
        ranges("pendingRanges", gaps.pending)
        writer.field("attempted", device.attempted)
        writer.field("sentOk", device.sentOK)
        writer.field("sentWithErrors", device.sentWithErrors)
        writer.key("latest")
        if let latest = device.latest { writer.raw(latest) } else { writer.null() }
        writer.endObject()
    }

    /// Per app: devices, devices with gaps, missing batches (the `/metrics` gauges).
    static func gauges(_ store: any GatewayStoring, now: Int64, graceMilliseconds: Int64) async throws -> [String: (
        devices: Int, withGaps: Int, missing: Int64
    )] {
        let devices = try await store.diagnosticsDevices(app: nil, records: false)
        var result: [String: (devices: Int, withGaps: Int, missing: Int64)] = [:]
        for (app, device) in devices {
            let missing = DiagnosticsLedger.gaps(device.received, now: now, graceMilliseconds: graceMilliseconds)
                .missing.reduce(Int64(0)) { $0 + $1.count }
            var entry = result[app] ?? (0, 0, 0)
            entry.devices += 1
            if missing > 0 { entry.withGaps += 1 }
            entry.missing += missing
            result[app] = entry
        }
        return result
    }
}
