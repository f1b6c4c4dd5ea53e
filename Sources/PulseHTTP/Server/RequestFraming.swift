/// The checks on a request head that decide whether its body can be delimited unambiguously,
/// made before any body byte is read (RFC 9112 §5.1, §6.1, §6.3).
///
/// libmicrohttpd 0.9.75 accepts every one of these shapes and frames the body its own way — chunked
/// over `Content-Length`, the first of two `Content-Length` values, no length at all for
/// `Content-Length : N` (it keeps the name with its trailing space) — so a proxy in front that frames
/// the same bytes differently would let a second request hidden in the body through (request
/// smuggling). Each is answered with 400, and the connection is closed after it, so nothing after
/// the head is parsed as a request. A transfer coding other than `chunked` is answered with 501 at
/// once (libmicrohttpd would otherwise read the body until the client closes).
enum RequestFraming {
    /// The response for a head whose framing is refused, or `nil` when it is acceptable.
    static func rejection(of headers: HTTPHeaders) -> HTTPResponse? {
        var lengths: [String] = []
        var codings: [Substring] = []
        var hasTransferEncoding = false
        for field in headers {
            guard isToken(field.name) else {
                // Includes whitespace between the name and the colon (§5.1).
                return refuse(.badRequest, "invalid header field name")
            }
            if HTTPHeaders.namesEqual(field.name, "Content-Length") {
                lengths.append(field.value)
            } else if HTTPHeaders.namesEqual(field.name, "Transfer-Encoding") {
                hasTransferEncoding = true
                for coding in field.value.split(separator: ",", omittingEmptySubsequences: true) {
                    let trimmed = coding.trimmingSpaces
                    if !trimmed.isEmpty { codings.append(trimmed) }
                }
            }
        }
        if hasTransferEncoding {
            guard lengths.isEmpty else {
                return refuse(.badRequest, "both Content-Length and Transfer-Encoding")
            }
            // Only chunked is understood; anything else cannot be decoded (§6.1).
            guard codings.allSatisfy({ HTTPHeaders.namesEqual(String($0), "chunked") }) else {
                return refuse(.notImplemented, "unsupported transfer coding")
            }
            guard codings.count == 1 else {
                return refuse(.badRequest, "chunked must be the only transfer coding, once")
            }
            return nil
        }
        guard lengths.count <= 1 else { return refuse(.badRequest, "more than one Content-Length") }
        if let length = lengths.first, length.isEmpty || !length.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return refuse(.badRequest, "invalid Content-Length")
        }
        return nil
    }

    private static func refuse(_ status: HTTPStatus, _ reason: String) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "text/plain; charset=utf-8", "Connection": "close"],
            body: Array("\(reason)\n".utf8))
    }

    /// RFC 9110 §5.6.2 `token`.
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(MediaType.isTokenByte)
    }
}
