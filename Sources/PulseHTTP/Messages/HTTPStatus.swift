/// An HTTP response status code.
///
/// Use the named constants (``ok``, ``contentTooLarge``, …) rather than bare numbers; any code in
/// 100...599 can still be made with ``init(code:)`` for statuses without a constant. The reason phrase
/// on the wire is chosen by the server library from the code.
package struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    /// The numeric code, 100...599.
    package let code: Int

    /// Creates a status from its numeric code; codes outside 100...599 are clamped to 500.
    package init(code: Int) {
        self.code = (100...599).contains(code) ? code : 500
    }

    /// `true` for 2xx codes.
    package var isSuccess: Bool { (200...299).contains(code) }

    package var description: String { String(code) }

    /// 200 OK.
    package static let ok = HTTPStatus(code: 200)
    /// 202 Accepted.
    package static let accepted = HTTPStatus(code: 202)
    /// 204 No Content.
    package static let noContent = HTTPStatus(code: 204)
    /// 400 Bad Request.
    package static let badRequest = HTTPStatus(code: 400)
    /// 401 Unauthorized.
    package static let unauthorized = HTTPStatus(code: 401)
    /// 403 Forbidden.
    package static let forbidden = HTTPStatus(code: 403)
    /// 404 Not Found.
    package static let notFound = HTTPStatus(code: 404)
    /// 405 Method Not Allowed.
    package static let methodNotAllowed = HTTPStatus(code: 405)
    /// 408 Request Timeout.
    package static let requestTimeout = HTTPStatus(code: 408)
    /// 411 Length Required.
    package static let lengthRequired = HTTPStatus(code: 411)
    /// 413 Content Too Large (formerly "Payload Too Large").
    package static let contentTooLarge = HTTPStatus(code: 413)
    /// 415 Unsupported Media Type.
    package static let unsupportedMediaType = HTTPStatus(code: 415)
    /// 429 Too Many Requests.
    package static let tooManyRequests = HTTPStatus(code: 429)
    /// 431 Request Header Fields Too Large.
    package static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431)
    /// 500 Internal Server Error.
    package static let internalServerError = HTTPStatus(code: 500)
    /// 501 Not Implemented.
    package static let notImplemented = HTTPStatus(code: 501)
    /// 502 Bad Gateway.
    package static let badGateway = HTTPStatus(code: 502)
    /// 503 Service Unavailable.
    package static let serviceUnavailable = HTTPStatus(code: 503)
    /// 504 Gateway Timeout.
    package static let gatewayTimeout = HTTPStatus(code: 504)
}
