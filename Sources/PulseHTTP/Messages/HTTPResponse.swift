/// A response produced by a server handler.
///
/// The server adds `Content-Length` and manages `Connection` itself; fields with those names, and
/// `Transfer-Encoding`, are ignored, except that `Connection: close` asks the server to close the
/// connection after this response.
public struct HTTPResponse: Sendable {
    /// The status code.
    public var status: HTTPStatus
    /// The header fields to send.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]

    /// Creates a response.
    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
