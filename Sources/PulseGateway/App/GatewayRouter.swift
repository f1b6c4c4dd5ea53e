import Foundation
import Glibc
import OTLPProtobuf
import PulseHTTP
import PulseJSON
import PulseKit
import PulseStorage

/// Routes HTTP requests: the three OTLP intake paths and the operations endpoints.
///
/// Every response carries the request's `X-Request-Id` (``RequestID``) and is timed into
/// `pulsegate_http_request_duration_seconds`; a refused request on an app-facing route (intake,
/// `/v1/policy`, `/v1/diagnostics`, an unknown path) is explained in the log (``RejectionLog``).
struct GatewayRouter: Sendable {
    let intake: GatewayIntake
    let operations: OperationsEndpoints
    let policy: PolicyEndpoint
    let status: StatusEndpoint
    let telemetry: GatewayTelemetry

    /// Answers `request` through `respond`, exactly once. Called on the libmicrohttpd thread that
    /// read it (``HTTPServer/init(configuration:dispatch:)``): an intake `POST` stays on that thread
    /// up to its commit and is answered from the commit thread
    /// (``GatewayIntake/handle(_:signal:requestID:respond:)``); every other route runs in a task.
    func dispatch(_ request: HTTPRequest, respond: @escaping @Sendable (HTTPResponse) -> Void) {
        let started = telemetry.clock.monotonicMilliseconds()
        let requestID = telemetry.requestID(request)
        let answer: @Sendable (HTTPResponse, String) -> Void = { [telemetry] response, route in
            var response = response
            requestID.stamp(&response)
            telemetry.durations.observe(
                route: route, status: response.status.code,
                seconds: Double(max(0, telemetry.clock.monotonicMilliseconds() - started)) / 1000)
            respond(response)
        }
        if let signal = OTLPSignal(path: request.path), request.method == .post {
            let revision = policy.revision(for: request)
            intake.handle(request, signal: signal, requestID: requestID) { [policy] response in
                var response = response
                policy.stamp(&response, revision: revision)
                answer(response, signal.path)
            }
            return
        }
        Task {
            let (response, route) = await route(request, requestID: requestID)
            answer(response, route)
        }
    }

    /// The response and the route label it is counted under, for every request but an intake `POST`.
    private func route(_ request: HTTPRequest, requestID: RequestID) async -> (HTTPResponse, String) {
        if let signal = OTLPSignal(path: request.path) {
            let rejection = IntakeRejection(
                .methodNotAllowed, "\(request.method) is not allowed on \(signal.path); use POST")
            intake.metrics.request(route: signal.path, code: 405)
            refused(request, requestID: requestID, route: signal.path, rejection: rejection)
            return (GatewayIntake.errorResponse(rejection), signal.path)
        }
        switch request.path {
        case PolicyEndpoint.path:
            let response = await policy.handle(request)
            intake.metrics.request(route: PolicyEndpoint.path, code: response.status.code)
            refused(request, requestID: requestID, route: PolicyEndpoint.path, response: response)
            return (response, PolicyEndpoint.path)
        case DiagnosticsEndpoint.path:
            let response = await DiagnosticsEndpoint(
                store: operations.store, clock: operations.clock, policy: operations.policy()
            ).handle(request)
            intake.metrics.request(route: request.path, code: response.status.code)
            refused(request, requestID: requestID, route: DiagnosticsEndpoint.path, response: response)
            return (response, DiagnosticsEndpoint.path)
        case StatusEndpoint.htmlPath, StatusEndpoint.jsonPath:
            let response = await status.handle(request)
            intake.metrics.request(route: request.path, code: response.status.code)
            return (response, request.path)
        case "/livez", "/readyz", "/metrics":
            let response: HTTPResponse
            if request.method != .get && request.method != .head {
                response = GatewayIntake.onlyGetAllowed(request)
            } else if request.path == "/livez" {
                response = OperationsEndpoints.text(.ok, "ok\n")
            } else if request.path == "/readyz" {
                response = await operations.readiness()
            } else {
                response = await operations.metricsResponse()
            }
            intake.metrics.request(route: request.path, code: response.status.code)
            return (response, request.path)
        default:
            intake.metrics.request(route: "other", code: 404)
            let rejection = IntakeRejection(.notFound, "no route for \(request.path)")
            // One line per app per minute for all unknown paths, whatever they are.
            refused(request, requestID: requestID, route: "other", rejection: rejection, limitKey: "no route")
            return (GatewayIntake.errorResponse(rejection), "other")
        }
    }

    /// A response the HTTP server made before the handler (``HTTPServerConfiguration/earlyResponse``):
    /// it gets the request's id, and a refusal is explained like the router's own. A declared body
    /// over `maxBodyBytes` on an intake route gets the OTLP `Status` body (in the request's format)
    /// that a body found too large after decoding gets, so the device can tell why.
    func early(_ request: HTTPRequest, _ response: inout HTTPResponse) {
        let requestID = telemetry.requestID(request)
        let signal = OTLPSignal(path: request.path)
        let route = signal?.path ?? (Self.routes.contains(request.path) ? request.path : "other")
        var reason = String(decoding: response.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if response.status == .contentTooLarge {
            reason = "the body is larger than \(intake.maxBodyBytes) bytes"
            if signal != nil {
                let format = GatewayIntake.bodyFormat(request.headers["Content-Type"]) ?? .json
                var status = GatewayIntake.errorResponse(IntakeRejection(.contentTooLarge, reason), format: format)
                status.headers.set(name: "Connection", value: "close")
                response = status
            }
        }
        requestID.stamp(&response)
        if response.status == .serviceUnavailable && reason.isEmpty {
            // Draining at shutdown is expected; a request refused for the memory budget is not.
            guard !intake.isShuttingDown else { return }
            reason = "the gateway is busy with other large requests; retry later"
        }
        if signal != nil {
            let app =
                request.headers[IntakeHeaders.appIDHeader].map { IntakeHeaders.isValidIdentifier($0) ? $0 : nil }
                ?? intake.policy.defaultAppID
            telemetry.apps.request(app: app, wireBytes: 0)
            telemetry.apps.rejected(app: app, reason: RejectionReason(status: response.status.code))
        }
        intake.metrics.request(route: route, code: response.status.code)
        refused(
            request, requestID: requestID, route: route,
            rejection: IntakeRejection(response.status, reason.isEmpty ? "status \(response.status.code)" : reason))
    }

    /// The routes besides the intake's, for the route label.
    static let routes: Set<String> = [
        PolicyEndpoint.path, DiagnosticsEndpoint.path, StatusEndpoint.htmlPath, StatusEndpoint.jsonPath, "/livez",
        "/readyz", "/metrics",
    ]

    /// Logs a refused request of a route that answers with an OTLP `Status` body.
    private func refused(_ request: HTTPRequest, requestID: RequestID, route: String, response: HTTPResponse) {
        guard response.status.code >= 400 else { return }
        let message: String
        if let body = try? JSONValue.parse(response.body), case .string(let text)? = body["message"] {
            message = text
        } else {
            message = "status \(response.status.code)"
        }
        refused(request, requestID: requestID, route: route, rejection: IntakeRejection(response.status, message))
    }

    private func refused(
        _ request: HTTPRequest, requestID: RequestID, route: String, rejection: IntakeRejection,
        limitKey: String? = nil
    ) {
        let app = request.headers[IntakeHeaders.appIDHeader] ?? request.queryValue("app")
        let valid = app.flatMap { IntakeHeaders.isValidIdentifier($0) ? $0 : nil }
        telemetry.rejections.record(
            requestID: requestID, app: valid, route: route, status: rejection.status.code, reason: rejection.message,
            client: intake.clientAddress(of: request), limitKey: limitKey)
    }
}

/// `/readyz` and `/metrics`.
struct OperationsEndpoints: Sendable {
    let store: any GatewayStoring
    let forwarder: Forwarder?
    let metrics: GatewayMetrics
    let logger: GatewayLogger
    let clock: PulseClock
    /// Per-app counters, durations, build info, limits, process metrics.
    let telemetry: GatewayTelemetry
    /// The HTTP server's request-memory budget, for its gauges.
    let memoryBudget: RequestMemoryBudget
    let policy: @Sendable () -> GatewayPolicy
    /// Where the database lives (for the free-space check after a failed commit).
    let dataDirectory: String
    /// Free bytes the data directory's file system needs before a gateway whose last commit failed
    /// is ready again: one request of the largest size accepted.
    let requiredFreeBytes: Int

    /// Ready when a batch can be committed now and either the upstream answers or the outbox is
    /// under its cap.
    ///
    /// "Can be committed": storage takes a write transaction and, after an intake commit failed
    /// (disk full, read-only file system, broken database), a probe commit succeeds; until one does
    /// (or an intake commit does), the answer is 503 naming the failure.
    func readiness() async -> HTTPResponse {
        do {
            try await store.checkWritable()
        } catch {
            return Self.text(.serviceUnavailable, "storage not writable\n")
        }
        if let failure = store.commitHealth.lastFailure {
            // A small probe can fit in WAL space that the failed commit already allocated, so a full
            // disk also needs room for one more request before the gateway takes traffic again.
            let free = Self.freeBytes(dataDirectory)
            if let free, free < requiredFreeBytes {
                return Self.text(
                    .serviceUnavailable,
                    "storage cannot commit: the last batch commit failed (\(failure)); \(free) bytes free in the "
                        + "data directory, \(requiredFreeBytes) needed\n")
            }
            do {
                try await store.probeCommit()
            } catch {
                return Self.text(
                    .serviceUnavailable, "storage cannot commit: the last batch commit failed (\(failure))\n")
            }
        }
        let depth = store.outboxDepth
        let policy = self.policy()
        let underCap = depth.rows < policy.outboxMaxBatches && depth.bytes < policy.outboxMaxBytes
        let reachable = forwarder?.upstreamReachable ?? false
        guard reachable || underCap else {
            return Self.text(.serviceUnavailable, "upstream unreachable and outbox over its cap\n")
        }
        return Self.text(.ok, "ready\n")
    }

    func metricsResponse() async -> HTTPResponse {
        var out = PrometheusExposition()
        metrics.render(await gauges(), into: &out)
        telemetry.render(into: &out, outbox: store.outboxDepth.apps)
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: Array(out.text.utf8))
    }

    /// The gauges ``GatewayMetrics`` renders, read now.
    func gauges() async -> GatewayMetrics.Gauges {
        let depth = store.outboxDepth
        var gauges = GatewayMetrics.Gauges()
        gauges.outboxBatches = depth.rows
        gauges.outboxBytes = depth.bytes
        let policy = self.policy()
        if let oldest = try? await store.oldestCreatedAt() {
            gauges.oldestAgeSeconds = Double(max(0, clock.wallClockMilliseconds() - oldest)) / 1000
        }
        gauges.deadLetters = (try? await store.deadLetterCount()) ?? 0
        gauges.upstreamConnections = forwarder?.openConnections ?? 0
        gauges.upstreamEvictions = forwarder?.connectionEvictions ?? 0
        gauges.database = store.commitStatistics
        gauges.requestMemoryReserved = memoryBudget.reservedBytes
        gauges.requestMemoryBudget = memoryBudget.limitBytes
        gauges.logLinesDropped = logger.droppedLines
        let grace = Int64(policy.diagnosticsGapGraceSeconds) * 1_000
        gauges.diagnostics =
            (try? await DiagnosticsEndpoint.gauges(store, now: clock.wallClockMilliseconds(), graceMilliseconds: grace))
            ?? [:]
        return gauges
    }

    /// Bytes available to unprivileged writers on the file system of `path`, or `nil` if unknown.
    static func freeBytes(_ path: String) -> Int? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        let (bytes, overflow) = Int(clamping: info.f_bavail).multipliedReportingOverflow(
            by: Int(clamping: info.f_frsize))
        return overflow ? Int.max : bytes
    }

    static func text(_ status: HTTPStatus, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(body.utf8))
    }
}
