import CMicroHTTPD
import CPulseShims
import Synchronization

/// The state shared by libmicrohttpd's callbacks, the handler tasks and ``HTTPServer``, plus the
/// callbacks themselves.
///
/// The callbacks run on libmicrohttpd's event-loop threads, not on Swift's cooperative pool; they
/// do small synchronous work (copying bytes, building the request) and hand the complete request to
/// the dispatcher, on the same thread, with the ``HTTPResponder`` of its suspended connection.
final class ServerCore: Sendable {
    typealias Handler = @Sendable (HTTPRequest, HTTPResponder) -> Void

    let handler: Handler
    let maxBodyBytes: Int
    let retryAfterSeconds: Int
    /// What requests in flight may hold; each request reserves ``memoryEstimate`` of its body.
    let memoryBudget: RequestMemoryBudget
    let memoryEstimate: HTTPServerConfiguration.MemoryEstimate
    let memoryWait: Duration
    /// The per-request read deadlines (slowloris protection).
    let deadlines: ReadDeadlines
    /// The most query parameters a request target may have.
    let maxQueryParameters: Int
    /// libmicrohttpd's per-connection pool, which also has to hold the parsed query.
    let headerMemoryLimit: Int
    /// ``HTTPServerConfiguration/earlyResponse``.
    let earlyResponse: HTTPServerConfiguration.EarlyResponse?
    /// Whether answers may be written straight to a connection's socket (plain HTTP only: over TLS
    /// the connection is closed instead).
    let writesEarlyAnswers: Bool
    /// Set when shutdown begins: new requests get 503.
    let shuttingDown = Atomic<Bool>(false)
    /// Requests that have a context (headers received, not yet completed).
    let activeRequests = Atomic<Int>(0)
    /// Connections suspended while their handler runs, so a shutdown can force them; once `closed`,
    /// nothing is suspended any more.
    private let suspensions = Mutex<Suspensions>(Suspensions())
    /// The resumes of suspended connections still in progress (``closeSuspensions(answering:)`` waits
    /// for them).
    private let resumes = Resumes()

    private struct Suspensions {
        var slots: [ObjectIdentifier: ResponseSlot] = [:]
        var closed = false
    }

    init(handler: @escaping Handler, configuration: HTTPServerConfiguration) {
        self.handler = handler
        self.maxBodyBytes = configuration.maxBodyBytes
        self.retryAfterSeconds = configuration.shutdownRetryAfterSeconds
        self.memoryBudget = configuration.requestMemoryBudget
        self.memoryEstimate = configuration.requestMemoryEstimate
        self.memoryWait = configuration.requestMemoryWait
        self.deadlines = ReadDeadlines(
            limits: .init(
                headerTimeout: configuration.headerTimeout, bodyTimeout: configuration.bodyTimeout,
                minBodyBytesPerSecond: configuration.minBodyBytesPerSecond, idleTimeout: configuration.idleTimeout))
        self.maxQueryParameters = configuration.maxQueryParameters
        self.headerMemoryLimit = configuration.headerMemoryLimit
        self.writesEarlyAnswers = configuration.tls == nil
        self.earlyResponse = configuration.earlyResponse
    }

    /// `response` after ``earlyResponse`` saw it.
    private func early(_ response: HTTPResponse, _ request: @autoclosure () -> HTTPRequest) -> HTTPResponse {
        guard let earlyResponse else { return response }
        var amended = response
        earlyResponse(request(), &amended)
        return amended
    }

    /// The bodiless request ``earlyResponse`` is shown for a request with a context.
    private static func head(of context: RequestContext) -> HTTPRequest {
        HTTPRequest(
            method: context.method, path: context.path, query: context.query, headers: context.headers,
            remoteAddress: context.remoteAddress)
    }

    /// The bodiless request ``earlyResponse`` is shown for a request refused in its first call.
    private static func head(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?, headers: HTTPHeaders
    ) -> HTTPRequest {
        HTTPRequest(
            method: HTTPMethod(method.map { String(cString: $0) } ?? ""), path: url.map { String(cString: $0) } ?? "/",
            headers: headers, remoteAddress: remoteAddress(of: connection))
    }

    /// Stops suspending connections, then answers every request whose handler is still running with
    /// `response` and resumes its connection. Returns how many were forced.
    ///
    /// After this returns no connection is suspended, and none will be, and no resume begun by a
    /// handler is still running: a request completing later is answered with ``unavailable``
    /// directly. This is what makes stopping the daemon safe (libmicrohttpd aborts when stopped with a
    /// suspended connection, and a resume signals the daemon's threads).
    func closeSuspensions(answering response: HTTPResponse) -> Int {
        let slots = suspensions.withLock { state in
            state.closed = true
            return Array(state.slots.values)
        }
        let forced = slots.reduce(0) { $0 + ($1.fulfill(response) ? 1 : 0) }
        resumes.waitUntilDone()
        return forced
    }

    /// The 503 sent to requests that arrive, or complete, during shutdown, and to requests the
    /// memory budget had no room for within ``memoryWait``.
    var unavailable: HTTPResponse {
        HTTPResponse(
            status: .serviceUnavailable, headers: ["Retry-After": String(retryAfterSeconds), "Connection": "close"])
    }

    // MARK: - Access handler

    /// One call of libmicrohttpd's access handler; see `MHD_AccessHandlerCallback`.
    func handle(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        uploadData: UnsafePointer<CChar>?, uploadDataSize: UnsafeMutablePointer<Int>,
        contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let raw = contextPointer.pointee else {
            return begin(connection: connection, url: url, method: method, contextPointer: contextPointer)
        }
        // Already answered from the URI callback: close without reading further.
        guard !Self.isAnsweredEarly(raw) else { return .NO }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeUnretainedValue()
        return step(context, connection: connection, uploadData: uploadData, uploadDataSize: uploadDataSize)
    }

    /// One access-handler call for a request that already has its context.
    private func step(
        _ context: RequestContext, connection: OpaquePointer, uploadData: UnsafePointer<CChar>?,
        uploadDataSize: UnsafeMutablePointer<Int>
    ) -> MHD_Result {
        let size = uploadDataSize.pointee
        switch context.phase {
        case .receiving:
            if size > 0 {
                guard let uploadData else { return .NO }
                if context.body.count + size > maxBodyBytes {
                    // A chunked body crossed the limit (a declared one was refused in begin).
                    let response = earlyResponse == nil ? nil : early(Self.bodyTooLarge, Self.head(of: context))
                    uploadDataSize.pointee = 0
                    return answerWhileReceiving(context, connection: connection, response: response)
                }
                let needed = memoryEstimate(
                    context.headers, max(context.declaredLength ?? 0, context.body.count + size))
                if !context.memory.growNow(to: needed) {
                    // Leave the bytes unconsumed: libmicrohttpd hands them over again after the resume.
                    return awaitMemory(context, bytes: needed, connection: connection)
                }
                uploadDataSize.pointee = 0
                deadlines.bodyReceived(connection, count: size)
                UnsafeRawBufferPointer(start: uploadData, count: size).withMemoryRebound(to: UInt8.self) {
                    context.body.append(contentsOf: $0)
                }
                return .YES
            }
            return dispatch(context, connection: connection)
        case .awaitingMemory(let slot):
            _ = suspensions.withLock { $0.slots.removeValue(forKey: ObjectIdentifier(slot)) }
            if let refusal = slot.take() {
                context.body = []
                context.phase = .discarding(remaining: maxBodyBytes, response: refusal)
            } else {
                context.phase = .receiving
            }
            // A connection suspended in the first call is called once more without data after the
            // resume; that is not the end of the body (nothing suspends on the final call).
            guard size > 0 else { return .YES }
            return step(context, connection: connection, uploadData: uploadData, uploadDataSize: uploadDataSize)
        case .discarding(let remaining, let response):
            if size > 0 {
                uploadDataSize.pointee = 0
                deadlines.bodyReceived(connection, count: size)
                guard size <= remaining else {
                    // Still sending: closed if answered already, else answered with 413 first.
                    guard response != nil else { return .NO }
                    return answerWhileReceiving(context, connection: connection)
                }
                context.phase = .discarding(remaining: remaining - size, response: response)
                return .YES
            }
            guard let response else { return .NO }
            return queue(response, on: connection)
        case .handling(let slot):
            // Called again after the resume: the response is waiting in the slot.
            guard let response = slot.take() else { return .NO }
            return queue(response, on: connection)
        }
    }

    /// Answers 413 to a chunked body that crossed ``maxBodyBytes``, at once: an upload may never end,
    /// and libmicrohttpd queues no response before the body is complete. The answer is written
    /// straight to the socket (which is then shut for sending), the next ``maxBodyBytes`` are still
    /// read and dropped so the client can read it before the connection closes (a close with unread
    /// bytes would reset it and could destroy the answer in flight), and then the connection closes.
    /// `response` is the 413 as ``earlyResponse`` amended it (its fields and body are written too);
    /// `nil` writes the plain 413.
    private func answerWhileReceiving(
        _ context: RequestContext, connection: OpaquePointer, response: HTTPResponse? = nil
    ) -> MHD_Result {
        context.body = []
        context.memory.release()
        guard writesEarlyAnswers else { return .NO }
        let raw = response.map(Self.rawTooLarge) ?? Self.earlyTooLarge
        let written = raw.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                pg_mhd_send_early_response(connection, $0.baseAddress, $0.count, 1)
            }
        }
        guard written == 0 else { return .NO }
        context.phase = .discarding(remaining: maxBodyBytes, response: nil)
        return .YES
    }

    /// An amended 413 as raw bytes: the status line, `Connection: close`, the response's other
    /// sendable fields, `Content-Length` and the body.
    private static func rawTooLarge(_ response: HTTPResponse) -> [UInt8] {
        var head = "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
        for field in response.headers where isSendable(field) && !HTTPHeaders.namesEqual(field.name, "Connection") {
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "Content-Length: \(response.body.count)\r\n\r\n"
        return Array(head.utf8) + response.body
    }

    /// ``bodyTooLarge`` as raw bytes, for ``answerWhileReceiving(_:connection:response:)``.
    private static let earlyTooLarge = Array(
        "HTTP/1.1 413 Content Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".utf8)

    /// Suspends the connection until the memory budget has room for `bytes` more for this request,
    /// or ``memoryWait`` has passed (then the request is refused with 503 and `Retry-After`).
    private func awaitMemory(_ context: RequestContext, bytes: Int, connection: OpaquePointer) -> MHD_Result {
        guard let slot = suspend(connection) else {
            context.body = []
            context.phase = .discarding(remaining: maxBodyBytes, response: early(unavailable, Self.head(of: context)))
            return .YES
        }
        context.phase = .awaitingMemory(slot)
        let memory = context.memory
        let refusal = unavailable
        let head = earlyResponse == nil ? nil : Self.head(of: context)
        Task {
            if await memory.grow(to: bytes) {
                slot.proceed()
            } else {
                slot.fulfill(head.map { self.early(refusal, $0) } ?? refusal)
            }
        }
        return .YES
    }

    /// Suspends `connection` and registers its slot for a shutdown to force, or returns `nil` (not
    /// suspended) once the shutdown has closed suspensions.
    private func suspend(_ connection: OpaquePointer) -> ResponseSlot? {
        let slot = ResponseSlot(suspended: ConnectionHandle(pointer: connection), resumes: resumes)
        // Suspend before any task can resume it, and under the lock, so a shutdown either sees this
        // slot or stops us suspending.
        let suspended = suspensions.withLock { state in
            guard !state.closed else { return false }
            state.slots[ObjectIdentifier(slot)] = slot
            MHD_suspend_connection(connection)
            return true
        }
        return suspended ? slot : nil
    }

    /// The first call for a request: headers are complete, no body has been read yet.
    private func begin(
        connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?,
        contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let headers = Self.headers(of: connection)
        let head = { Self.head(connection: connection, url: url, method: method, headers: headers) }
        if shuttingDown.load(ordering: .relaxed) {
            return queue(early(unavailable, head()), on: connection)
        }
        if let refused = RequestFraming.rejection(of: headers) {
            // Before any body byte is read; with `Connection: close` libmicrohttpd closes after the
            // response, so bytes hidden in the body are never parsed as a request.
            return queue(early(refused, head()), on: connection)
        }
        if let declared = headers["Content-Length"], let length = Int(declared), length > maxBodyBytes {
            // Rejected before any body byte is read; libmicrohttpd discards the rest and closes.
            return queue(early(Self.bodyTooLarge, head()), on: connection)
        }
        let declaredLength = headers["Content-Length"].flatMap { Int($0) }
        let context = RequestContext(
            method: HTTPMethod(method.map { String(cString: $0) } ?? ""),
            path: url.map { String(cString: $0) } ?? "/",
            query: Self.query(of: connection), headers: headers,
            remoteAddress: Self.remoteAddress(of: connection), declaredLength: declaredLength,
            memory: RequestMemoryReservation(budget: memoryBudget, wait: memoryWait))
        contextPointer.pointee = Unmanaged.passRetained(context).toOpaque()
        activeRequests.add(1, ordering: .relaxed)
        deadlines.headReceived(connection)
        if let declaredLength, declaredLength > 0 {
            // The whole estimate is reserved before any body byte is read (and waited for here, before
            // a 100 Continue); the buffer itself grows only as bytes arrive, so a client that
            // declares 16 MiB and sends nothing does not make the connection hold that much.
            let needed = memoryEstimate(headers, declaredLength)
            if !context.memory.growNow(to: needed) {
                return awaitMemory(context, bytes: needed, connection: connection)
            }
            context.body.reserveCapacity(min(declaredLength, Self.maxReservation))
        }
        return .YES
    }

    // MARK: - Request target

    /// The context pointer of a request already answered from ``sawTarget(_:connection:)``: the
    /// address 1, never dereferenced.
    private static func isAnsweredEarly(_ raw: UnsafeMutableRawPointer) -> Bool { UInt(bitPattern: raw) == 1 }

    /// Bytes of libmicrohttpd's pool one parsed query parameter takes (its record, with slack).
    private static let poolBytesPerParameter = 64

    /// The 414 for a target with too many query parameters, as raw bytes.
    private static let earlyTooManyParameters: [UInt8] = {
        let body = "too many query parameters\n"
        return Array(
            ("HTTP/1.1 414 URI Too Long\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)").utf8)
    }()

    /// libmicrohttpd's URI callback: the request line is in, its query not yet parsed.
    ///
    /// libmicrohttpd 0.9.75 stores every query parameter in the connection's memory pool; when they
    /// do not fit it tries to answer 431, but that answer needs the same exhausted pool, so the client
    /// gets nothing until the idle timeout. A target with more than ``maxQueryParameters``
    /// parameters, or more than fit in three quarters of the pool, is therefore answered here with
    /// 414 and `Connection: close`, written straight to the socket (nothing has been written for this
    /// request yet, and libmicrohttpd reads the next request only after the previous response is
    /// out); libmicrohttpd closes the connection when it next calls the access handler, or when the
    /// deadlines or the client do. Returns the request's initial
    /// context pointer.
    func sawTarget(_ target: UnsafePointer<CChar>?, connection: OpaquePointer) -> UnsafeMutableRawPointer? {
        guard let target else { return nil }
        var length = 0
        var parameters = 0
        var queryStart: Int?
        while target[length] != 0 {
            let byte = UInt8(bitPattern: target[length])
            if byte == UInt8(ascii: "?") && queryStart == nil {
                queryStart = length + 1
                parameters = 1
            } else if byte == UInt8(ascii: "&") && queryStart != nil {
                parameters += 1
            }
            length += 1
        }
        guard
            parameters > maxQueryParameters
                || parameters * Self.poolBytesPerParameter + length > headerMemoryLimit / 4 * 3
        else { return nil }
        // libmicrohttpd parses the query right after this callback, from this same buffer (its read
        // buffer, handed over as `const`), and 0.9.75 ignores a failure to store a parameter: it queues
        // its own 431 into the exhausted pool and carries on with the request as if the line had
        // parsed, a path that crashed a worker on a NULL response (FramingTests, under load). Ending
        // the query here, after the `?`, leaves it nothing to parse; the request is answered already.
        if let queryStart { UnsafeMutablePointer(mutating: target)[queryStart] = 0 }
        guard writesEarlyAnswers else { return UnsafeMutableRawPointer(bitPattern: 1) }
        // The sending side stays open (`Connection: close` ends the exchange for the client): with it
        // shut, libmicrohttpd's own error answer for the query it then failed to store met a closed
        // socket and dereferenced a NULL response (SIGSEGV in a worker, 6 in 40 FramingTests runs).
        _ = Self.earlyTooManyParameters.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) {
                pg_mhd_send_early_response(connection, $0.baseAddress, $0.count, 0)
            }
        }
        return UnsafeMutableRawPointer(bitPattern: 1)
    }

    /// The body is complete: suspend the connection and hand the request to the dispatcher, here on
    /// the connection's thread. Whoever answers the responder, from whatever thread, resumes the
    /// connection; an answer given before the dispatcher returns is sent in the next loop turn.
    private func dispatch(_ context: RequestContext, connection: OpaquePointer) -> MHD_Result {
        guard let slot = suspend(connection) else {
            context.body = []
            return queue(unavailable, on: connection)
        }
        context.phase = .handling(slot)
        deadlines.handling(connection)
        handler(context.takeRequest(), HTTPResponder(slot: slot))
        return .YES
    }

    // MARK: - Request completed

    /// libmicrohttpd is done with a request (response sent, client gone, or daemon stopping).
    func completed(connection: OpaquePointer?, contextPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        if let connection { deadlines.responded(connection) }
        guard let contextPointer, let raw = contextPointer.pointee else { return }
        contextPointer.pointee = nil
        guard !Self.isAnsweredEarly(raw) else { return }
        let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
        switch context.phase {
        case .handling(let slot), .awaitingMemory(let slot):
            _ = suspensions.withLock { $0.slots.removeValue(forKey: ObjectIdentifier(slot)) }
        case .receiving, .discarding:
            break
        }
        context.body = []
        context.memory.release()
        activeRequests.subtract(1, ordering: .relaxed)
    }

    // MARK: - Responses

    /// The most body capacity reserved up front from a declared `Content-Length`.
    private static let maxReservation = 1 << 20

    private static let bodyTooLarge = HTTPResponse(
        status: .contentTooLarge, headers: ["Connection": "close"])

    /// Queues `response` on the connection; only valid inside the access handler.
    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress, bytes.count > 0 else {
                return MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
            }
            return MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: base), .RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return .NO }
        defer { MHD_destroy_response(mhdResponse) }
        for field in response.headers where Self.isSendable(field) {
            _ = MHD_add_response_header(mhdResponse, field.name, field.value)
        }
        return MHD_queue_response(connection, UInt32(response.status.code), mhdResponse)
    }

    /// Whether a handler-provided field may be passed on: framing fields belong to the server, and
    /// fields that could split the header block are dropped.
    private static func isSendable(_ field: HTTPHeaders.Field) -> Bool {
        if HTTPHeaders.namesEqual(field.name, "Content-Length")
            || HTTPHeaders.namesEqual(field.name, "Transfer-Encoding")
        {
            return false
        }
        if HTTPHeaders.namesEqual(field.name, "Connection") {
            return HTTPHeaders.namesEqual(field.value, "close")
        }
        guard !field.name.isEmpty else { return false }
        for byte in field.name.utf8 where byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: ":") {
            return false
        }
        for byte in field.value.utf8 where byte == 0x0D || byte == 0x0A || byte == 0 {
            return false
        }
        return true
    }

    // MARK: - Reading the request

    private static func headers(of connection: OpaquePointer) -> HTTPHeaders {
        var fields: [HTTPHeaders.Field] = []
        withUnsafeMutablePointer(to: &fields) { pointer in
            _ = MHD_get_connection_values(
                connection, .HEADER_KIND,
                { cls, _, key, value in
                    guard let cls, let key else { return .YES }
                    let fields = cls.assumingMemoryBound(to: [HTTPHeaders.Field].self)
                    fields.pointee.append(
                        HTTPHeaders.Field(name: String(cString: key), value: value.map { String(cString: $0) } ?? ""))
                    return .YES
                }, pointer)
        }
        return HTTPHeaders(fields)
    }

    private static func query(of connection: OpaquePointer) -> [HTTPQueryItem] {
        var items: [HTTPQueryItem] = []
        withUnsafeMutablePointer(to: &items) { pointer in
            _ = MHD_get_connection_values(
                connection, .GET_ARGUMENT_KIND,
                { cls, _, key, value in
                    guard let cls, let key else { return .YES }
                    let items = cls.assumingMemoryBound(to: [HTTPQueryItem].self)
                    items.pointee.append(
                        HTTPQueryItem(name: String(cString: key), value: value.map { String(cString: $0) }))
                    return .YES
                }, pointer)
        }
        return items
    }

    /// The peer's address, formatted into a buffer on the stack (once per request).
    private static func remoteAddress(of connection: OpaquePointer) -> HTTPRemoteAddress? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { host in
            host.initialize(repeating: 0)
            var port: UInt16 = 0
            guard pg_mhd_client_address(connection, host.baseAddress, host.count, &port) == 0 else { return nil }
            return HTTPRemoteAddress(host: String(cString: host.baseAddress!), port: Int(port))
        }
    }
}
