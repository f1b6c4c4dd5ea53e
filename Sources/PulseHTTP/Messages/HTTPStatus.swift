/// An HTTP response status code.
///
/// Use the named constants (``ok``, ``contentTooLarge``, …) rather than bare numbers; any code in
/// 100...599 can still be made with ``init(code:)`` for statuses without a constant. The reason phrase
/// on the wire is chosen by the server library from the code.
public struct HTTPStatus: Sendable, Hashable, CustomStringConvertible {
    /// The numeric code, 100...599.
    public let code: Int

    /// Creates a status from its numeric code; codes outside 100...599 are clamped to 500.
    public init(code: Int) {
        self.code = (100...599).contains(code) ? code : 500
    }

    /// `true` for 2xx codes.
    public var isSuccess: Bool { (200...299).contains(code) }

    public var description: String { String(code) }

    /// 200 OK.
    public static let ok = HTTPStatus(code: 200)
    /// 202 Accepted.
    public static let accepted = HTTPStatus(code: 202)
    /// 204 No Content.
    public static let noContent = HTTPStatus(code: 204)
    /// 400 Bad Request.
    public static let badRequest = HTTPStatus(code: 400)
    /// 401 Unauthorized.
    public static let unauthorized = HTTPStatus(code: 401)
    /// 403 Forbidden.
    public static let forbidden = HTTPStatus(code: 403)
    /// 404 Not Found.
    public static let notFound = HTTPStatus(code: 404)
    /// 405 Method Not Allowed.
    public static let methodNotAllowed = HTTPStatus(code: 405)
    /// 408 Request Timeout.
    public static let requestTimeout = HTTPStatus(code: 408)
    /// 411 Length Required.
    public static let lengthRequired = HTTPStatus(code: 411)
    /// 413 Content Too Large (formerly "Payload Too Large").
    public static let contentTooLarge = HTTPStatus(code: 413)
    /// 415 Unsupported Media Type.
    public static let unsupportedMediaType = HTTPStatus(code: 415)
    /// 429 Too Many Requests.
    public static let tooManyRequests = HTTPStatus(code: 429)
    /// 431 Request Header Fields Too Large.
    public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431)
    /// 500 Internal Server Error.
    public static let internalServerError = HTTPStatus(code: 500)
    /// 501 Not Implemented.
    public static let notImplemented = HTTPStatus(code: 501)
    /// 502 Bad Gateway.
    public static let badGateway = HTTPStatus(code: 502)
    /// 503 Service Unavailable.
    public static let serviceUnavailable = HTTPStatus(code: 503)
    /// 504 Gateway Timeout.
    public static let gatewayTimeout = HTTPStatus(code: 504)
}
