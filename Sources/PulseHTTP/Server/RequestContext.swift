/// Per-request state kept by libmicrohttpd in the request's context pointer.
///
/// Only the libmicrohttpd thread that owns the connection touches it (a connection stays on one
/// event-loop thread); the handler task never sees it, only the ``ResponseSlot``.
final class RequestContext {
    enum Phase {
        /// Headers are in; body bytes are being buffered.
        case receiving
        /// The body crossed the limit; further bytes are dropped, up to the remaining budget.
        case discarding(budget: Int)
        /// The connection is suspended while the handler runs.
        case handling(ResponseSlot)
    }

    var phase: Phase = .receiving
    let method: HTTPMethod
    let path: String
    let query: [HTTPQueryItem]
    let headers: HTTPHeaders
    let remoteAddress: HTTPRemoteAddress?
    var body: [UInt8] = []

    init(
        method: HTTPMethod, path: String, query: [HTTPQueryItem], headers: HTTPHeaders,
        remoteAddress: HTTPRemoteAddress?
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
    }

    /// The complete request, handing over the buffered body.
    func takeRequest() -> HTTPRequest {
        let request = HTTPRequest(
            method: method, path: path, query: query, headers: headers, body: body, remoteAddress: remoteAddress)
        body = []
        return request
    }
}
