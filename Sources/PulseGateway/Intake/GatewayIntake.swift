import Foundation
import OTLPProtobuf
import PulseHTTP
import PulseHashing
import PulseJSON
import PulseKit
import Synchronization

/// The OTLP/HTTP intake: validates a request, maps it, commits it durably, answers.
///
/// Order of checks (the first failure answers): shutting down → 503; outbox over its cap → 429;
/// media type → 415 (JSON and protobuf are accepted; a protobuf body is decoded straight into the
/// document model of its OTLP/JSON form, so both take one walk); Apsio headers → 400/403/401; the
/// app's outbox share or request rate (``AppAdmission``) → 429; body
/// decoding → 413/400/415; JSON → 400; mapping → 400; durable commit → 503 on storage failure;
/// then 200 (`{}`, or `partialSuccess` when records were dropped), with `Apsio-Duplicate: true`
/// for a batch seen before and `Apsio-Batch-Conflict: true` for a batch id reused with another
/// body (stored as its own batch, `docs/durability.md`).
final class GatewayIntake: Sendable {
    let store: any GatewayStoring
    let metrics: GatewayMetrics
    let logger: GatewayLogger
    let clock: PulseClock
    /// Rejection log, per-app counters.
    let telemetry: GatewayTelemetry
    let maxBodyBytes: Int
    private let policyState: Mutex<GatewayPolicy>
    /// Parsers reused across requests (each keeps its buffers), at most 64 idle.
    private let parsers: JSONParserPool
    private let stopping = Atomic<Bool>(false)
    /// One conflict warning per app per minute.
    private let conflictLog: LogRateLimiter
    /// Interval between conflict warnings of one app.
    static let conflictLogIntervalMilliseconds: Int64 = 60_000
    /// One derived-identity line per app per minute (same interval).
    private let derivedLog: LogRateLimiter
    /// Called after a commit with the new outbox rows (the forwarder's wake-up).
    private let onAccepted: @Sendable ([OutboxDraft]) -> Void
    /// Per-app outbox shares and request rates.
    private let admission: AppAdmission

    init(
        store: any GatewayStoring, policy: GatewayPolicy, maxBodyBytes: Int, clock: PulseClock,
        metrics: GatewayMetrics, logger: GatewayLogger, telemetry: GatewayTelemetry, admission: AppAdmission,
        onAccepted: @escaping @Sendable ([OutboxDraft]) -> Void
    ) {
        self.telemetry = telemetry
        self.admission = admission
        self.store = store
        self.policyState = Mutex(policy)
        self.maxBodyBytes = maxBodyBytes
        parsers = JSONParserPool(
            capacity: 64, maxDepth: 64, maxBytes: Self.jsonLimit(maxBodyBytes), bigIntegersAsDoubles: true)
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
        self.onAccepted = onAccepted
        self.conflictLog = LogRateLimiter(intervalMilliseconds: Self.conflictLogIntervalMilliseconds, clock: clock)
        self.derivedLog = LogRateLimiter(intervalMilliseconds: Self.conflictLogIntervalMilliseconds, clock: clock)
    }

    var policy: GatewayPolicy {
        get { policyState.withLock { $0 } }
        set { policyState.withLock { $0 = newValue } }
    }

    /// From now on every request gets 503 with `Retry-After`.
    func beginShutdown() {
        stopping.store(true, ordering: .relaxed)
    }

    /// Whether ``beginShutdown()`` was called.
    var isShuttingDown: Bool { stopping.load(ordering: .relaxed) }

    /// Handles `POST /v1/{logs,traces,metrics}` and answers through `respond`, exactly once. A
    /// refused request is explained in the log (``RejectionLog``) with `requestID`.
    ///
    /// Threads (docs/gateway.md, "The intake's threads"): the checks, decoding, parsing and mapping
    /// run on the calling thread (the libmicrohttpd thread that read the request), unless the
    /// request's memory reservation has to wait for room, which continues in a task; the commit runs
    /// on the store's commit thread, which for ``GatewayStore`` also builds the answer and calls
    /// `respond` right after the group's fsync'd `COMMIT`. A refusal found before the commit is
    /// answered on the thread that found it.
    func handle(
        _ request: HTTPRequest, signal: OTLPSignal, requestID: RequestID,
        respond: @escaping @Sendable (HTTPResponse) -> Void
    ) {
        // Answers use the request's format; an unreadable Content-Type gets a JSON answer.
        let format = Self.bodyFormat(request.headers["Content-Type"])
        // The App ID only when well-formed (it comes from the device).
        let app =
            request.headers[IntakeHeaders.appIDHeader].map { IntakeHeaders.isValidIdentifier($0) ? $0 : nil }
            ?? policy.defaultAppID
        telemetry.apps.request(app: app, wireBytes: request.body.count)
        accept(request, signal: signal, format: format, requestID: requestID) { result in
            let response: HTTPResponse
            switch result {
            case .success(let accepted):
                response = accepted
            case .failure(let error):
                response = Self.errorResponse(error, format: format ?? .json)
                self.telemetry.apps.rejected(app: app, reason: RejectionReason(status: error.status.code))
                self.telemetry.rejections.record(
                    requestID: requestID, app: app, route: signal.path, status: error.status.code,
                    reason: error.message, client: self.clientAddress(of: request))
            }
            self.metrics.request(route: signal.path, code: response.status.code)
            if self.logger.level <= .debug {
                // The access line: who sent what and how it was answered.
                self.logger.debug(
                    "request",
                    [
                        "requestId": requestID.value, "client": self.clientAddress(of: request),
                        "peer": request.remoteAddress?.description ?? "unknown", "method": request.method.rawValue,
                        "path": signal.path, "app": app ?? "-", "status": String(response.status.code),
                    ])
            }
            respond(response)
        }
    }

    /// The client's address for logs and records: the TCP peer, or the right-most untrusted
    /// `X-Forwarded-For` entry when the peer is a trusted proxy (``GatewayPolicy/trustedProxies``).
    func clientAddress(of request: HTTPRequest) -> String {
        policy.trustedProxies.clientAddress(of: request) ?? "unknown"
    }

    /// How ``accept(_:signal:format:requestID:answer:)`` ends, on whichever thread it ends.
    private typealias Answer = @Sendable (Result<HTTPResponse, IntakeRejection>) -> Void

    /// A request past its checks and admission, with its decoded body.
    ///
    /// A class: it rides in every closure of the request's path (the answer, the reservation's
    /// continuation, the commit's completion), and each of those copies is then one retain instead
    /// of a copy of every field (the request with its headers, the policy, the parsed headers).
    private final class Admitted: Sendable {
        let request: HTTPRequest
        let signal: OTLPSignal
        let format: BodyFormat
        let requestID: RequestID
        let policy: GatewayPolicy
        let headers: IntakeHeaders
        /// Released once the request is answered.
        let ticket: AppAdmission.Ticket
        let body: [UInt8]
        /// The wire body's size when it is content-encoded, else 0.
        let encodedBytes: Int

        init(
            request: HTTPRequest, signal: OTLPSignal, format: BodyFormat, requestID: RequestID, policy: GatewayPolicy,
            headers: IntakeHeaders, ticket: AppAdmission.Ticket, body: [UInt8], encodedBytes: Int
        ) {
            self.request = request
            self.signal = signal
            self.format = format
            self.requestID = requestID
            self.policy = policy
            self.headers = headers
            self.ticket = ticket
            self.body = body
            self.encodedBytes = encodedBytes
        }
    }

    /// A mapped request on its way to the store (and back, once, for a batch id conflict).
    private struct Batch: Sendable {
        let admitted: Admitted
        let bodyHash: [UInt8]
        let batchID: String
        let receivedAt: Int64
        var context: MappingContext
        let document: JSONDocument
        let sequenceHeader: String?
        var mapped: MappedRequest
        var diagnostics: DiagnosticsObservation?
        var conflict = false
    }

    private func accept(
        _ request: HTTPRequest, signal: OTLPSignal, format: BodyFormat?, requestID: RequestID,
        answer: @escaping Answer
    ) {
        let admitted: Admitted
        do throws(IntakeRejection) {
            admitted = try admit(request, signal: signal, format: format, requestID: requestID)
        } catch {
            answer(.failure(error))
            return
        }
        let finish: Answer = { result in
            admitted.ticket.release()
            answer(result)
        }
        // The server reserved the wire body's estimate; a decoded body is bigger than that.
        let bytes =
            admitted.encodedBytes > 0
            ? admitted.encodedBytes + Self.workingSet(format: admitted.format, decodedBytes: admitted.body.count) : 0
        reserve(admitted, bytes, failing: finish) { self.parse(admitted, finish: finish) }
    }

    /// The checks before the body is parsed, the app's admission, and the body's decoding.
    private func admit(
        _ request: HTTPRequest, signal: OTLPSignal, format: BodyFormat?, requestID: RequestID
    ) throws(IntakeRejection) -> Admitted {
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
        guard let format else { throw Self.mediaTypeRejection(request.headers["Content-Type"]) }
        let headers = try IntakeHeaders(request.headers, policy: policy)
        let ticket = try admission.admit(
            app: headers.appID, bytes: request.body.count, policy: policy, depth: store.outboxDepth(app: headers.appID)
        ) { telemetry.apps.limited(app: headers.appID, reason: $0.rawValue) }
        let body: [UInt8]
        do {
            body = try BodyDecoder.decode(
                request.body, contentEncoding: request.headers["Content-Encoding"], maxOutputBytes: maxBodyBytes)
        } catch {
            ticket.release()
            throw IntakeRejection(error.suggestedStatus ?? .badRequest, error.message)
        }
        metrics.bytes(wire: request.body.count, decoded: body.count)
        return Admitted(
            request: request, signal: signal, format: format, requestID: requestID, policy: policy, headers: headers,
            ticket: ticket, body: body, encodedBytes: Self.isContentEncoded(request.headers) ? request.body.count : 0)
    }

    /// Parses and maps the decoded body, then commits it.
    private func parse(_ admitted: Admitted, finish: @escaping Answer) {
        let bodyHash = SHA256.hash(admitted.body)
        let headers = admitted.headers
        let document: JSONDocument
        do throws(IntakeRejection) {
            document = try Self.document(
                admitted.body, format: admitted.format, signal: admitted.signal, maxBytes: Self.jsonLimit(maxBodyBytes),
                parsers: parsers)
        } catch {
            finish(.failure(error))
            return
        }
        // For protobuf the size of the decoded document is known now: the protobuf body plus its
        // working set.
        let bytes =
            admitted.format == .protobuf
            ? admitted.encodedBytes + admitted.body.count
                + Self.documentWorkingSet(documentBytes: document.byteCount) : 0
        reserve(admitted, bytes, failing: finish) {
            let batchID = headers.batchID ?? Hex.encode(bodyHash)
            let receivedAt = self.clock.wallClockMilliseconds()
            let context = MappingContext(
                appID: headers.appID, batchID: batchID, receivedAt: receivedAt, sentAt: headers.sentAt,
                fallbacks: headers.fallbacks)
            let sequenceHeader = admitted.request.headers[DiagnosticsObservation.sequenceHeader]
            do throws(IntakeRejection) {
                let (mapped, diagnostics) = try Self.map(
                    document, signal: admitted.signal, context: context, sequenceHeader: sequenceHeader)
                self.commit(
                    Batch(
                        admitted: admitted, bodyHash: bodyHash, batchID: batchID, receivedAt: receivedAt,
                        context: context, document: document, sequenceHeader: sequenceHeader, mapped: mapped,
                        diagnostics: diagnostics),
                    finish: finish)
            } catch {
                finish(.failure(error))
            }
        }
    }

    /// The answer to a committed batch; runs where the store reports the commit (``GatewayStore``:
    /// its commit thread).
    private func committed(_ outcome: GatewayStore.IntakeOutcome, _ batch: Batch, finish: @escaping Answer) {
        let admitted = batch.admitted
        let (signal, headers, mapped) = (admitted.signal, admitted.headers, batch.mapped)
        switch outcome {
        case .accepted(_, let stored):
            metrics.records(mapped.records - mapped.rejected, signal: signal.rawValue)
            telemetry.apps.accepted(app: headers.appID, records: mapped.records - mapped.rejected)
            if mapped.rejected > 0 {
                metrics.oversized(mapped.rejected)
                telemetry.apps.rejected(app: headers.appID, reason: .partial)
                telemetry.rejections.record(
                    requestID: admitted.requestID, app: headers.appID, route: signal.path, status: 200,
                    reason: mapped.rejectionMessage(signal) ?? "records dropped",
                    client: clientAddress(of: admitted.request),
                    partial: true)
            }
            if !mapped.derivedIdentities.isEmpty { derivedIdentities(mapped.derivedIdentities, app: headers.appID) }
            if !mapped.drafts.isEmpty { onAccepted(mapped.drafts) }
            var response = Self.success(
                signal: signal, rejected: mapped.rejected, message: mapped.rejectionMessage(signal),
                format: admitted.format)
            if stored {
                conflictStored(
                    app: headers.appID, batchID: batch.batchID, signal: signal, request: admitted.request,
                    requestID: admitted.requestID)
                response.headers.set(name: Self.conflictHeader, value: "true")
            }
            finish(.success(response))
        case .duplicate:
            metrics.duplicate()
            telemetry.apps.duplicate(app: headers.appID)
            var response = Self.success(signal: signal, rejected: 0, message: nil, format: admitted.format)
            response.headers.set(name: "Apsio-Duplicate", value: "true")
            finish(.success(response))
        case .conflict:
            // The batch id is another body's: this body becomes its own batch, with Pulse batch
            // ids and derived event ids that include its hash (rare, so it is mapped again, in a
            // task rather than on the commit thread). A commit with `conflict: true` never answers
            // `.conflict`: this runs at most once per request.
            Task {
                var again = batch
                again.conflict = true
                again.context.conflictHash = Hex.encode(batch.bodyHash)
                do throws(IntakeRejection) {
                    (again.mapped, again.diagnostics) = try Self.map(
                        batch.document, signal: signal, context: again.context, sequenceHeader: batch.sequenceHeader)
                } catch {
                    finish(.failure(error))
                    return
                }
                self.commit(again, finish: finish)
            }
        }
    }

    /// Counts a conflicting batch and logs it at warning level, once a minute per app (the line
    /// says how many were not logged since).
    private func conflictStored(
        app: String, batchID: String, signal: OTLPSignal, request: HTTPRequest, requestID: RequestID
    ) {
        metrics.conflict()
        telemetry.apps.conflict(app: app)
        guard let suppressed = conflictLog.admit(app) else { return }
        logger.warning(
            "batch id reused with a different body; stored as its own batch",
            [
                "requestId": requestID.value, "app": app, "batchId": batchID, "signal": signal.rawValue,
                "client": clientAddress(of: request), "suppressed": String(suppressed),
            ])
    }

    /// Counts the resources of an accepted batch whose identity was derived and logs the first one at
    /// info level, once a minute per app (the line says how many were not logged since).
    private func derivedIdentities(_ identities: [ResolvedIdentity], app: String) {
        metrics.derivedIdentities(identities.count)
        guard let first = identities.first, let derivation = first.derivation,
            let suppressed = derivedLog.admit(app)
        else { return }
        logger.info(
            "identity derived for a resource that does not carry it",
            [
                "app": app, "installationId": first.installationID, "platform": first.platform,
                "sdkVersion": first.sdkVersion, "derived": derivation.fields.joined(separator: ","),
                "from": derivation.sources.isEmpty ? "-" : derivation.sources.joined(separator: ","),
                "suppressed": String(suppressed),
            ])
    }

    /// The response header marking a batch id reused with another body, stored as its own batch.
    static let conflictHeader = "Apsio-Batch-Conflict"

    /// The durable commit of a mapped request; a storage failure is a 503.
    private func commit(_ batch: Batch, finish: @escaping Answer) {
        let admitted = batch.admitted
        let headers = admitted.headers
        store.commitIntake(
            app: headers.appID, batchID: batch.batchID, bodyHash: batch.bodyHash, sentAt: headers.sentAt,
            now: batch.receivedAt, retentionMilliseconds: admitted.policy.dedupRetentionMilliseconds,
            drafts: batch.mapped.drafts, diagnostics: batch.diagnostics, conflict: batch.conflict,
            requestID: admitted.requestID.value
        ) { result in
            switch result {
            case .success(let outcome):
                self.store.commitHealth.succeeded()
                self.committed(outcome, batch, finish: finish)
            case .failure(let error):
                self.store.commitHealth.failed(error)
                self.logger.error(
                    "intake commit failed",
                    [
                        "requestId": admitted.requestID.value, "app": headers.appID, "batchId": batch.batchID,
                        "client": self.clientAddress(of: admitted.request), "error": "\(error)",
                    ])
                finish(
                    .failure(
                        IntakeRejection(
                            .serviceUnavailable, "storage is unavailable; retry later",
                            retryAfterSeconds: admitted.policy.retryAfterSeconds)))
            }
        }
    }

    /// Continues with `next` once the request's memory reservation holds `bytes` (0: no more than
    /// it holds): at once, on this thread, when the budget has room now; otherwise in a task that
    /// waits for room (``RequestMemoryReservation/grow(to:)``), refusing the request with 503 and
    /// `Retry-After` when none comes within the wait.
    private func reserve(
        _ admitted: Admitted, _ bytes: Int, failing finish: @escaping Answer, then next: @escaping @Sendable () -> Void
    ) {
        guard bytes > 0, let memory = admitted.request.memory, !memory.growNow(to: bytes) else {
            next()
            return
        }
        let retryAfterSeconds = admitted.policy.retryAfterSeconds
        Task {
            guard await memory.grow(to: bytes) else {
                finish(
                    .failure(
                        IntakeRejection(
                            .serviceUnavailable, "the gateway is busy with other large requests; retry later",
                            retryAfterSeconds: retryAfterSeconds)))
                return
            }
            next()
        }
    }

    /// The body as the OTLP/JSON document the mapping walks: JSON parsed (invalid JSON → 400),
    /// protobuf decoded straight into the same model (malformed protobuf → 400), within
    /// `maxBytes` of decoded document.
    static func document(
        _ body: [UInt8], format: BodyFormat, signal: OTLPSignal, maxBytes: Int, parsers: JSONParserPool
    ) throws(IntakeRejection) -> JSONDocument {
        switch format {
        case .json:
            return try parsers.withParser { parser throws(IntakeRejection) in
                do throws(PulseJSONError) {
                    return try parser.parse(body)
                } catch {
                    throw IntakeRejection(.badRequest, "the body is not valid JSON: \(error.message)")
                }
            }
        case .protobuf:
            var limits = OTLPProtobufLimits()
            limits.maxOutputBytes = maxBytes
            do {
                return try OTLPProtobuf.decodeDocument(body, signal: signal, limits: limits)
            } catch {
                throw IntakeRejection(
                    .badRequest, "the body is not a valid OTLP protobuf export request: \(error.message)")
            }
        }
    }

    static func map(
        _ document: JSONDocument, signal: OTLPSignal, context: MappingContext, sequenceHeader: String?
    ) throws(IntakeRejection) -> (MappedRequest, DiagnosticsObservation?) {
        var context = context
        context.sequenceHeader = sequenceHeader
        let mapped = try OTLPMapper.map(document.root, signal: signal, context: context)
        return (mapped, mapped.diagnostics)
    }

    // MARK: - Memory

    /// What handling a body takes at its peak, per decoded byte, measured with 14 MiB bodies
    /// (docs/operations.md): the body itself, the parser's buffers and node tape, and the mapped
    /// Pulse batches — 5× for records with kilobyte attributes, 6.4× for records of tiny ones.
    static let jsonWorkingSetFactor = 7
    /// The first estimate for protobuf (the body plus its decoded document's working set),
    /// corrected once the document's size is known.
    static let protobufWorkingSetFactor = 8
    /// What mapping a decoded protobuf document takes at its peak, per document byte
    /// (``JSONDocument/byteCount``: 16 per value and key plus the string bytes): the document
    /// itself and the mapped Pulse batches, which JSON's factor counts against the JSON text (the
    /// document has no text, no parser buffers and no second copy of its tape).
    static let documentWorkingSetFactor = 5

    /// The memory a decoded protobuf document of `documentBytes` takes to map, including itself.
    static func documentWorkingSet(documentBytes: Int) -> Int {
        let (bytes, overflow) = documentBytes.multipliedReportingOverflow(by: documentWorkingSetFactor)
        return overflow ? Int.max : bytes
    }

    /// The memory a request reserves (``RequestMemoryBudget``) to decode, parse and map a body of
    /// `decodedBytes` (including the decoded body itself).
    static func workingSet(format: BodyFormat, decodedBytes: Int) -> Int {
        let factor = format == .protobuf ? protobufWorkingSetFactor : jsonWorkingSetFactor
        let (bytes, overflow) = decodedBytes.multipliedReportingOverflow(by: factor)
        return overflow ? Int.max : bytes
    }

    /// The reservation the HTTP server makes for a wire body of `wireBytes`, before reading it: the
    /// whole working set when the body is not content-encoded, otherwise the wire body only (the
    /// intake grows the reservation once it knows the decoded size).
    @Sendable static func reservation(headers: HTTPHeaders, wireBytes: Int) -> Int {
        guard let format = bodyFormat(headers["Content-Type"]), !isContentEncoded(headers) else { return wireBytes }
        return workingSet(format: format, decodedBytes: wireBytes)
    }

    /// Whether `Content-Encoding` names anything but identity.
    static func isContentEncoded(_ headers: HTTPHeaders) -> Bool {
        guard let value = headers["Content-Encoding"] else { return false }
        return value.split(separator: ",").contains { element in
            let name = element.trimmingCharacters(in: .whitespaces).lowercased()
            return !name.isEmpty && name != "identity"
        }
    }

    // MARK: - Media type

    /// The body format named by `Content-Type` (parameters allowed), or `nil` when unsupported.
    ///
    /// It is read three times per request (the server's memory estimate when the headers arrive and
    /// with each body chunk, then the intake), so the two values the SDKs send, written exactly so,
    /// are recognised without parsing; the parse gives them the same answer.
    static func bodyFormat(_ header: String?) -> BodyFormat? {
        guard let header else { return nil }
        if header == jsonMediaType { return .json }
        if header == OTLPProtobuf.mediaType { return .protobuf }
        guard let type = MediaType.parse(header) else { return nil }
        if type.matches(.json) { return .json }
        if type.matches(.protobuf) || type.essence == "application/protobuf" { return .protobuf }
        return nil
    }

    /// The `Content-Type` of JSON requests and answers.
    private static let jsonMediaType = "application/json"

    static func mediaTypeRejection(_ header: String?) -> IntakeRejection {
        guard let header, let type = MediaType.parse(header) else {
            return IntakeRejection(
                .unsupportedMediaType, "Content-Type must be application/json or application/x-protobuf")
        }
        return IntakeRejection(
            .unsupportedMediaType,
            "Content-Type \(type.essence) is not supported; send application/json or application/x-protobuf")
    }

    /// The OTLP/JSON form of a protobuf body may be larger than the protobuf (hex ids, decimal
    /// strings, key names, 16 bytes per decoded value); the JSON parser and the protobuf decoder
    /// allow this much.
    static func jsonLimit(_ maxBodyBytes: Int) -> Int {
        let (limit, overflow) = maxBodyBytes.multipliedReportingOverflow(by: 4)
        return overflow ? Int.max : limit
    }

    // MARK: - Responses

    static func success(signal: OTLPSignal, rejected: Int, message: String?, format: BodyFormat) -> HTTPResponse {
        if format == .protobuf {
            let body = OTLPProtobuf.encodeResponse(
                signal: signal, rejected: Int64(rejected),
                errorMessage: rejected > 0 ? message ?? "" : "")
            return HTTPResponse(status: .ok, headers: ["Content-Type": OTLPProtobuf.mediaType], body: body)
        }
        var writer = JSONWriter(capacity: 128)
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
        return HTTPResponse(status: .ok, headers: ["Content-Type": jsonMediaType], body: writer.bytes)
    }

    /// The 405 of a route that answers only `GET` (some also `HEAD`): an ``errorResponse(_:format:)``
    /// naming the method and the path, with `Allow: GET`.
    static func onlyGetAllowed(_ request: HTTPRequest) -> HTTPResponse {
        var response = errorResponse(
            IntakeRejection(.methodNotAllowed, "\(request.method) is not allowed on \(request.path); use GET"))
        response.headers.set(name: "Allow", value: "GET")
        return response
    }

    /// An OTLP `Status` body (`{"code":<gRPC code>,"message":"…"}`) with the HTTP status.
    /// For protobuf requests the same `google.rpc.Status`, protobuf-encoded.
    static func errorResponse(_ rejection: IntakeRejection, format: BodyFormat = .json) -> HTTPResponse {
        let body: [UInt8]
        var headers: HTTPHeaders
        switch format {
        case .protobuf:
            body = OTLPProtobuf.encodeStatus(code: Int32(grpcCode(rejection.status)), message: rejection.message)
            headers = ["Content-Type": OTLPProtobuf.mediaType]
        case .json:
            var writer = JSONWriter(capacity: 128)
            writer.beginObject()
            writer.key("code")
            writer.int(Int64(grpcCode(rejection.status)))
            writer.key("message")
            writer.string(rejection.message)
            writer.endObject()
            body = writer.bytes
            headers = ["Content-Type": jsonMediaType]
        }
        if let seconds = rejection.retryAfterSeconds { headers.set(name: "Retry-After", value: String(seconds)) }
        if rejection.status == .methodNotAllowed { headers.set(name: "Allow", value: "POST") }
        if rejection.status == .unauthorized { headers.set(name: "WWW-Authenticate", value: "Bearer") }
        return HTTPResponse(status: rejection.status, headers: headers, body: body)
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

/// The OTLP/HTTP body encodings the intake accepts.
enum BodyFormat: Sendable, Equatable {
    case json
    case protobuf
}
