/// A complete HTTP request as handed to a server handler: the body has been fully received.
package struct HTTPRequest: Sendable {
    /// The request method.
    package var method: HTTPMethod
    /// The request path, percent-decoded, without the query string (e.g. `/v1/traces`).
    package var path: String
    /// The query string's items, in order, percent-decoded.
    package var query: [HTTPQueryItem]
    /// The request header fields.
    package var headers: HTTPHeaders
    /// The body exactly as received on the wire (still content-encoded; see ``BodyDecoder``).
    package var body: [UInt8]
    /// The peer's address, when known.
    package var remoteAddress: HTTPRemoteAddress?
    /// The request's share of the server's ``RequestMemoryBudget`` (already holding the estimate for
    /// the wire body), or `nil` for a request that did not come from an ``HTTPServer``. A handler
    /// that is about to hold more — a decompressed or transcoded copy — grows it first.
    package var memory: RequestMemoryReservation?

    /// Creates a request.
    package init(
        method: HTTPMethod, path: String, query: [HTTPQueryItem] = [], headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [], remoteAddress: HTTPRemoteAddress? = nil, memory: RequestMemoryReservation? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.remoteAddress = remoteAddress
        self.memory = memory
    }

    /// The value of the first query item with this name (case-sensitive), or `nil`.
    package func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}
