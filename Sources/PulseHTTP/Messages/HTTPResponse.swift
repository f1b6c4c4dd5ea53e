/// A response produced by a server handler.
///
/// The server adds `Content-Length` and manages `Connection` itself; fields with those names, and
/// `Transfer-Encoding`, are ignored, except that `Connection: close` asks the server to close the
/// connection after this response.
package struct HTTPResponse: Sendable {
    /// The status code.
    package var status: HTTPStatus
    /// The header fields to send.
    package var headers: HTTPHeaders
    /// The body bytes.
    package var body: [UInt8]

    /// Creates a response.
    package init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
