import PulseHTTP
import PulseJSON
import Synchronization

/// The OTLP/HTTP intake: validates a request, maps it, commits it durably, answers.
///
/// Order of checks (the first failure answers): shutting down → 503; outbox over its cap → 429;
/// media type → 415 (protobuf too, until it is supported); Apsio headers → 400/403; body
/// decoding → 413/400/415; JSON → 400; mapping → 400; durable commit → 503 on storage failure;
/// then 200 (`{}`, or `partialSuccess` when records were dropped), with `Apsio-Duplicate: true`
/// for a batch seen before.
final class GatewayIntake: Sendable {
    let store: GatewayStore
    let metrics: GatewayMetrics
    let logger: GatewayLogger
    let clock: GatewayClock
    let maxBodyBytes: Int
    private let policyState: Mutex<GatewayPolicy>
    private let parsers = Mutex<[ParserBox]>([])
    private let stopping = Atomic<Bool>(false)
    /// Called after a commit with the new outbox rows (the forwarder's wake-up).
    private let onAccepted: @Sendable ([OutboxDraft]) -> Void

    init(
        store: GatewayStore, policy: GatewayPolicy, maxBodyBytes: Int, clock: GatewayClock, metrics: GatewayMetrics,
        logger: GatewayLogger, onAccepted: @escaping @Sendable ([OutboxDraft]) -> Void
    ) {
        self.store = store
        self.policyState = Mutex(policy)
        self.maxBodyBytes = maxBodyBytes
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.onAccepted = onAccepted
    }

    var policy: GatewayPolicy {
        get { policyState.withLock { $0 } }
        set { policyState.withLock { $0 = newValue } }
    }

    /// From now on every request gets 503 with `Retry-After`.
    func beginShutdown() {
        stopping.store(true, ordering: .relaxed)
    }

    /// Handles `POST /v1/{logs,traces,metrics}`.
    func handle(_ request: HTTPRequest, signal: OTLPSignal) async -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await accept(request, signal: signal)
        } catch {
            response = Self.errorResponse(error)
        }
        metrics.request(route: signal.path, code: response.status.code)
        return response
    }

    private func accept(_ request: HTTPRequest, signal: OTLPSignal) async throws(IntakeRejection) -> HTTPResponse {
        let policy = self.policy
        if stopping.load(ordering: .relaxed) {
            throw IntakeRejection(
                .serviceUnavailable, "the gateway is shutting down", retryAfterSeconds: policy.retryAfterSeconds)
        }
        let depth = store.outboxDepth
        if depth.rows >= policy.outboxMaxBatches || depth.bytes >= policy.outboxMaxBytes {
            throw IntakeRejection(
                .tooManyRequests, "the outbox is full; retry later", retryAfterSeconds: policy.retryAfterSeconds)
        }
        try Self.checkMediaType(request.headers["Content-Type"])
        let headers = try IntakeHeaders(request.headers, policy: policy)
        let body: [UInt8]
        do {
            body = try BodyDecoder.decode(
                request.body, contentEncoding: request.headers["Content-Encoding"], maxOutputBytes: maxBodyBytes)
        } catch {
            throw IntakeRejection(error.suggestedStatus ?? .badRequest, error.message)
        }
        metrics.bytes(wire: request.body.count, decoded: body.count)
        let bodyHash = SHA256.hash(body)
        let batchID = headers.batchID ?? Hex.encode(bodyHash)
        let receivedAt = clock.now()
        let context = MappingContext(
            appID: headers.appID, batchID: batchID, receivedAt: receivedAt, sentAt: headers.sentAt,
            fallbacks: headers.fallbacks)
        let mapped = try map(body, signal: signal, context: context)

        let outcome: GatewayStore.IntakeOutcome
        do {
            outcome = try await store.commitIntake(
                app: headers.appID, batchID: batchID, bodyHash: bodyHash, sentAt: headers.sentAt, now: receivedAt,
                retentionMilliseconds: policy.dedupRetentionMilliseconds, drafts: mapped.drafts)
        } catch {
            logger.error("intake commit failed", ["app": headers.appID, "batchId": batchID, "error": "\(error)"])
            throw IntakeRejection(
                .serviceUnavailable, "storage is unavailable; retry later", retryAfterSeconds: policy.retryAfterSeconds)
        }
        switch outcome {
        case .accepted:
            metrics.records(mapped.records - mapped.rejected, signal: signal.rawValue)
            if mapped.rejected > 0 { metrics.oversized(mapped.rejected) }
            if !mapped.drafts.isEmpty { onAccepted(mapped.drafts) }
            return Self.success(signal: signal, rejected: mapped.rejected, message: mapped.rejectionMessage(signal))
        case .duplicate:
            metrics.duplicate()
            var response = Self.success(signal: signal, rejected: 0, message: nil)
            response.headers.set(name: "Apsio-Duplicate", value: "true")
            return response
        case .conflict:
            metrics.conflict()
            logger.warning(
                "batch id reused with a different body; kept the first",
                ["app": headers.appID, "batchId": batchID, "signal": signal.rawValue])
            var response = Self.success(signal: signal, rejected: 0, message: nil)
            response.headers.set(name: "Apsio-Duplicate", value: "true")
            response.headers.set(name: "Apsio-Conflict", value: "true")
            return response
        }
    }

    private func map(_ body: [UInt8], signal: OTLPSignal, context: MappingContext) throws(IntakeRejection)
        -> MappedRequest
    {
        let box = parsers.withLock { $0.popLast() } ?? ParserBox(maxBytes: maxBodyBytes)
        defer { parsers.withLock { if $0.count < 64 { $0.append(box) } } }
        let document: JSONDocument
        do {
            document = try box.parser.parse(body)
        } catch {
            throw IntakeRejection(.badRequest, "the body is not valid JSON: \(error.message)")
        }
        return try OTLPMapper.map(document.root, signal: signal, context: context)
    }

    // MARK: - Media type

    static func checkMediaType(_ header: String?) throws(IntakeRejection) {
        guard let header, let type = MediaType.parse(header) else {
            throw IntakeRejection(.unsupportedMediaType, "Content-Type must be application/json")
        }
        if type.matches(.json) { return }
        if type.matches(.protobuf) || type.essence == "application/protobuf" {
            throw IntakeRejection(
                .unsupportedMediaType, "OTLP/HTTP protobuf is not supported yet; send application/json")
        }
        throw IntakeRejection(
            .unsupportedMediaType, "Content-Type \(type.essence) is not supported; send application/json")
    }

    // MARK: - Responses

    static func success(signal: OTLPSignal, rejected: Int, message: String?) -> HTTPResponse {
        var writer = PayloadWriter(capacity: 128)
        writer.beginObject()
        if rejected > 0 {
            writer.key("partialSuccess")
            writer.beginObject()
            writer.key(signal.rejectedKey)
            writer.string(String(rejected))
            writer.key("errorMessage")
            writer.string(message ?? "")
            writer.endObject()
        }
        writer.endObject()
        return HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"], body: writer.bytes)
    }

    /// An OTLP `Status` body (`{"code":<gRPC code>,"message":"…"}`) with the HTTP status.
    static func errorResponse(_ rejection: IntakeRejection) -> HTTPResponse {
        var writer = PayloadWriter(capacity: 128)
        writer.beginObject()
        writer.key("code")
        writer.int(Int64(grpcCode(rejection.status)))
        writer.key("message")
        writer.string(rejection.message)
        writer.endObject()
        var headers: HTTPHeaders = ["Content-Type": "application/json"]
        if let seconds = rejection.retryAfterSeconds { headers.set(name: "Retry-After", value: String(seconds)) }
        if rejection.status == .methodNotAllowed { headers.set(name: "Allow", value: "POST") }
        return HTTPResponse(status: rejection.status, headers: headers, body: writer.bytes)
    }

    static func grpcCode(_ status: HTTPStatus) -> Int {
        switch status.code {
        case 400, 413, 415: return 3  // INVALID_ARGUMENT
        case 401: return 16  // UNAUTHENTICATED
        case 403: return 7  // PERMISSION_DENIED
        case 404: return 5  // NOT_FOUND
        case 405: return 12  // UNIMPLEMENTED
        case 429: return 8  // RESOURCE_EXHAUSTED
        case 503: return 14  // UNAVAILABLE
        default: return 2  // UNKNOWN
        }
    }
}

/// A parser used by one request at a time (taken from and returned to the intake's pool).
private final class ParserBox: @unchecked Sendable {
    let parser: JSONParser

    init(maxBytes: Int) {
        parser = JSONParser(maxDepth: 64, maxBytes: maxBytes)
    }
}
