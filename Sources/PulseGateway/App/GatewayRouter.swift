import Glibc
import PulseHTTP

/// Routes HTTP requests: the three OTLP intake paths and the operations endpoints.
struct GatewayRouter: Sendable {
    let intake: GatewayIntake
    let operations: OperationsEndpoints
    let policy: PolicyEndpoint

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        if let signal = OTLPSignal(path: request.path) {
            guard request.method == .post else {
                let response = GatewayIntake.errorResponse(
                    IntakeRejection(.methodNotAllowed, "\(request.method) is not allowed on \(signal.path); use POST"))
                intake.metrics.request(route: signal.path, code: 405)
                return response
            }
            var response = await intake.handle(request, signal: signal)
            policy.stamp(&response, request: request)
            return response
        }
        switch request.path {
        case PolicyEndpoint.path:
            let response = await policy.handle(request)
            intake.metrics.request(route: PolicyEndpoint.path, code: response.status.code)
            return response
        case DiagnosticsEndpoint.path:
            let response = await DiagnosticsEndpoint(
                store: operations.store, clock: operations.clock, policy: operations.policy()
            ).handle(request)
            intake.metrics.request(route: request.path, code: response.status.code)
            return response
        case "/livez", "/readyz", "/metrics":
            let response: HTTPResponse
            if request.method != .get && request.method != .head {
                var rejected = GatewayIntake.errorResponse(
                    IntakeRejection(.methodNotAllowed, "\(request.method) is not allowed on \(request.path); use GET"))
                rejected.headers.set(name: "Allow", value: "GET")
                response = rejected
            } else if request.path == "/livez" {
                response = OperationsEndpoints.text(.ok, "ok\n")
            } else if request.path == "/readyz" {
                response = await operations.readiness()
            } else {
                response = await operations.metricsResponse()
            }
            intake.metrics.request(route: request.path, code: response.status.code)
            return response
        default:
            intake.metrics.request(route: "other", code: 404)
            return GatewayIntake.errorResponse(IntakeRejection(.notFound, "no route for \(request.path)"))
        }
    }
}

/// `/readyz` and `/metrics`.
struct OperationsEndpoints: Sendable {
    let store: any GatewayStoring
    let forwarder: Forwarder?
    let metrics: GatewayMetrics
    let logger: GatewayLogger
    let clock: GatewayClock
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
        let depth = store.outboxDepth
        var gauges = GatewayMetrics.Gauges()
        gauges.outboxBatches = depth.rows
        gauges.outboxBytes = depth.bytes
        if let oldest = try? await store.oldestCreatedAt() {
            gauges.oldestAgeSeconds = Double(max(0, clock.now() - oldest)) / 1000
        }
        gauges.deadLetters = (try? await store.deadLetterCount()) ?? 0
        gauges.upstreamConnections = forwarder?.openConnections ?? 0
        let database = store.commitStatistics
        gauges.databaseCommits = database.commits
        gauges.groupCommits = database.groupCommits
        gauges.groupCommittedJobs = database.groupCommittedJobs
        gauges.largestGroupCommit = database.largestGroupCommit
        gauges.groupSizeCounts = database.groupSizeCounts
        gauges.groupSizeSum = database.groupSizeSum
        gauges.requestMemoryReserved = memoryBudget.reservedBytes
        gauges.requestMemoryBudget = memoryBudget.limitBytes
        gauges.logLinesDropped = logger.droppedLines
        let grace = Int64(policy().diagnosticsGapGraceSeconds) * 1_000
        gauges.diagnostics =
            (try? await DiagnosticsEndpoint.gauges(store, now: clock.now(), graceMilliseconds: grace)) ?? [:]
        return HTTPResponse(
            status: .ok, headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8"],
            body: Array(metrics.render(gauges).utf8))
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
