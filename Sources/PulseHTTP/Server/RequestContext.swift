/// Per-request state kept by libmicrohttpd in the request's context pointer.
///
/// Only the libmicrohttpd thread that owns the connection touches it (a connection stays on one
/// event-loop thread); the handler task never sees it, only the ``ResponseSlot``.
final class RequestContext {
    enum Phase {
        /// Headers are in; body bytes are being buffered.
        case receiving
        /// The connection is suspended until the memory budget has room for the body (the slot is
        /// resumed without a response) or the wait ends (the slot holds the 503).
        case awaitingMemory(ResponseSlot)
        /// The request is refused; the rest of the body (at most `remaining` more bytes) is read and
        /// dropped, then `response` is sent — or, when it is `nil` (the answer was already written
        /// while the body was arriving), the connection is closed.
        case discarding(remaining: Int, response: HTTPResponse?)
        /// The connection is suspended while the handler runs.
        case handling(ResponseSlot)
    }

    var phase: Phase = .receiving
    let method: HTTPMethod
    let path: String
    let query: [HTTPQueryItem]
    let headers: HTTPHeaders
    let remoteAddress: HTTPRemoteAddress?
    /// The declared `Content-Length`, or `nil` for a chunked body.
    let declaredLength: Int?
    /// This request's share of the server's memory budget, released when the request completes.
    let memory: RequestMemoryReservation
    var body: [UInt8] = []

    init(
        method: HTTPMethod, path: String, query: [HTTPQueryItem], headers: HTTPHeaders,
        remoteAddress: HTTPRemoteAddress?, declaredLength: Int?, memory: RequestMemoryReservation
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.declaredLength = declaredLength
        self.memory = memory
    }

    /// The complete request, handing over the buffered body.
    func takeRequest() -> HTTPRequest {
        let request = HTTPRequest(
            method: method, path: path, query: query, headers: headers, body: body, remoteAddress: remoteAddress,
            memory: memory)
        body = []
        return request
    }
}
