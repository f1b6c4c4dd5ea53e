/// Settings of an ``HTTPServer``.
///
/// Defaults suit a 2-core machine behind a load balancer. Every limit is enforced by the server
/// itself, before a handler runs:
///
/// - A body larger than ``maxBodyBytes`` *as received on the wire* (before any content decoding) is
///   answered with 413 (no body, `Connection: close`). A declared `Content-Length` above the limit
///   is rejected before the body is read; a chunked body is answered the moment it crosses the
///   limit, without reading the rest (an endless upload gets its 413 too), and the connection is
///   closed. The decompressed limit is the handler's business
///   (``BodyDecoder/decode(_:contentEncoding:maxOutputBytes:)``).
/// - Request line and headers must fit in ``headerMemoryLimit``; libmicrohttpd 0.9.75 answers larger
///   ones itself — 431 Request Header Fields Too Large for headers, 414 URI Too Long for an overlong
///   request line — and closes the connection. A request line it cannot parse at all gets no answer:
///   the connection is just closed. (It does not insist on `Host` for HTTP/1.1 requests.)
/// - Request framing is checked before any body byte is read (RFC 9112): `Content-Length` together
///   with `Transfer-Encoding`, more than one `Content-Length`, an invalid `Content-Length`, a header
///   name that is not a token (such as `Content-Length : 5`), or `chunked` that is not the one and
///   only transfer coding get 400; a transfer coding other than `chunked` gets 501. Each of these
///   answers carries `Connection: close` and the connection is closed after it.
/// - A request target with more than ``maxQueryParameters`` query parameters (or more than fit, at
///   64 bytes each plus the target itself, in three quarters of ``headerMemoryLimit``) gets 414 URI
///   Too Long and the connection is closed.
/// - Read deadlines guard against clients that send slowly (slowloris): a request's line and
///   headers must be complete within ``headerTimeout`` of the connection being accepted (on a
///   kept-alive connection: the longer of ``headerTimeout`` and ``idleTimeout`` after the previous
///   response); its body may take ``bodyTimeout`` plus one second for every
///   ``minBodyBytesPerSecond`` bytes received. A connection that misses a deadline is closed without
///   a response. Time spent in the handler does not count.
/// - Requests in flight together reserve at most ``requestMemoryBudget``: each reserves
///   ``requestMemoryEstimate`` of its wire body — all of a declared `Content-Length` before the
///   body is read, a chunked body as it grows — and holds it until its response is sent (see
///   ``RequestMemoryBudget``). A request that does not fit waits (its connection suspended, nothing
///   read) up to ``requestMemoryWait``; then its body is read and dropped and it gets 503 with
///   `Retry-After` (``shutdownRetryAfterSeconds``) and `Connection: close`.
/// - A connection that makes no progress for ``idleTimeout`` — a slow client, or an idle
///   keep-alive connection — is closed by libmicrohttpd without a response (it sends no 408). A
///   connection whose request is being handled is suspended and never times out.

import PulseKit

package struct HTTPServerConfiguration: Sendable {
    /// The numeric address to listen on: `127.0.0.1`, `0.0.0.0`, `::1`, `::` (IPv6 and IPv4, dual
    /// stack), or `localhost` (same as `127.0.0.1`). Host names are not resolved.
    package var host: String
    /// The TCP port; 0 picks a free port, readable from ``HTTPServer/port`` after start.
    package var port: Int
    /// The most connections served at once; further clients wait in the listen backlog.
    package var connectionLimit: Int
    /// The most connections from one IP address, or 0 for no per-address limit.
    package var perAddressConnectionLimit: Int
    /// How long a connection may make no progress before it is closed (rounded up to whole seconds).
    package var idleTimeout: Duration
    /// The number of event-loop threads (each runs its own epoll loop and accepts connections).
    package var threadCount: Int
    /// Memory per connection for the request line, headers and I/O buffers.
    package var headerMemoryLimit: Int
    /// The largest request body accepted as received on the wire (compressed size).
    package var maxBodyBytes: Int
    /// The kernel listen backlog.
    package var listenBacklog: Int
    /// The `Retry-After` value, in seconds, of the 503 sent to requests that arrive during shutdown
    /// and to requests refused for the memory budget.
    package var shutdownRetryAfterSeconds: Int
    /// The memory that requests in flight may reserve together (default 512 MiB): their buffered
    /// bodies and whatever ``requestMemoryEstimate`` says decoding them takes. Servers made with
    /// the same budget object share it.
    package var requestMemoryBudget: RequestMemoryBudget
    /// How long a request waits for room in the memory budget before it gets 503.
    package var requestMemoryWait: Duration
    /// The memory a request reserves for a wire body of the given size, given its headers (at
    /// least the size itself; the default is just the size). Called on libmicrohttpd's threads:
    /// keep it cheap.
    package var requestMemoryEstimate: MemoryEstimate

    /// Computes a request's memory reservation from its headers and wire body size.
    package typealias MemoryEstimate = @Sendable (_ headers: HTTPHeaders, _ wireBytes: Int) -> Int
    /// How long a request's line and headers may take to arrive, from the connection's accept (or
    /// from the previous response on a kept-alive connection, at least ``idleTimeout`` then).
    package var headerTimeout: Duration
    /// How long a request body may take to arrive before ``minBodyBytesPerSecond`` extends it.
    package var bodyTimeout: Duration
    /// Every this many body bytes received extend ``bodyTimeout`` by one second (the minimum average
    /// rate a slow client must keep up); 0 makes ``bodyTimeout`` a fixed limit for the whole body.
    package var minBodyBytesPerSecond: Int
    /// The most query parameters a request target may have.
    package var maxQueryParameters: Int
    /// Sees (and may amend) the responses the server makes itself, before the handler runs: a head
    /// whose framing is refused (400, 501), a declared body over ``maxBodyBytes`` (413), a request
    /// refused for the memory budget or during shutdown (503), a chunked body that crosses
    /// ``maxBodyBytes`` (413, written at once: the status stays, fields and body are sent). The
    /// request has no body. Called on libmicrohttpd's threads: keep it short, never block.
    package var earlyResponse: EarlyResponse?

    /// Observes or amends a response the server makes without the handler.
    package typealias EarlyResponse = @Sendable (_ request: HTTPRequest, _ response: inout HTTPResponse) -> Void

    /// Serve HTTPS with these credentials instead of plain HTTP (`nil`, the default).
    ///
    /// The TLS policy is fixed (`PG_TLS_PRIORITIES` in CPulseShims): TLS 1.2 and 1.3 only, AEAD
    /// ciphers only (AES-256-GCM, AES-128-GCM, ChaCha20-Poly1305), ECDHE key exchange only, the
    /// server's order of preference. ``HTTPServer/replaceTLSCredentials(_:)`` swaps the
    /// credentials while the server runs. Over TLS the two answers the server otherwise writes
    /// straight to the socket — 413 for a chunked body that crosses ``maxBodyBytes`` and 414 for
    /// too many query parameters — are not sent: the connection is closed instead.
    package var tls: TLSCredentials?

    /// Creates a configuration; every parameter has a default.
    package init(
        host: String = "127.0.0.1", port: Int = 4318, connectionLimit: Int = 1024,
        perAddressConnectionLimit: Int = 0, idleTimeout: Duration = .seconds(30), threadCount: Int = 2,
        headerMemoryLimit: Int = 32 * 1024, maxBodyBytes: Int = 16 * 1024 * 1024, listenBacklog: Int = 511,
        shutdownRetryAfterSeconds: Int = 5,
        requestMemoryBudget: RequestMemoryBudget = RequestMemoryBudget(limitBytes: 512 * 1024 * 1024),
        requestMemoryWait: Duration = .seconds(1),
        requestMemoryEstimate: @escaping MemoryEstimate = { _, wireBytes in wireBytes },
        headerTimeout: Duration = .seconds(10), bodyTimeout: Duration = .seconds(20), minBodyBytesPerSecond: Int = 500,
        maxQueryParameters: Int = 256, tls: TLSCredentials? = nil
    ) {
        self.tls = tls
        self.host = host
        self.port = port
        self.connectionLimit = connectionLimit
        self.perAddressConnectionLimit = perAddressConnectionLimit
        self.idleTimeout = idleTimeout
        self.threadCount = threadCount
        self.headerMemoryLimit = headerMemoryLimit
        self.maxBodyBytes = maxBodyBytes
        self.listenBacklog = listenBacklog
        self.shutdownRetryAfterSeconds = shutdownRetryAfterSeconds
        self.requestMemoryBudget = requestMemoryBudget
        self.requestMemoryWait = requestMemoryWait
        self.requestMemoryEstimate = requestMemoryEstimate
        self.headerTimeout = headerTimeout
        self.bodyTimeout = bodyTimeout
        self.minBodyBytesPerSecond = minBodyBytesPerSecond
        self.maxQueryParameters = maxQueryParameters
        self.earlyResponse = nil
    }

    /// Checks every field, throwing ``HTTPServerError/Code/invalidConfiguration`` for the first bad one.
    func validate() throws(HTTPServerError) {
        func fail(_ message: String) -> HTTPServerError { HTTPServerError(.invalidConfiguration, message) }
        guard (0...65535).contains(port) else { throw fail("port \(port) is outside 0...65535") }
        guard connectionLimit > 0 else { throw fail("connectionLimit must be positive") }
        guard perAddressConnectionLimit >= 0 else { throw fail("perAddressConnectionLimit must not be negative") }
        guard idleTimeout > .zero else { throw fail("idleTimeout must be positive") }
        guard (1...64).contains(threadCount) else { throw fail("threadCount must be in 1...64") }
        guard headerMemoryLimit >= 4096 else { throw fail("headerMemoryLimit must be at least 4096 bytes") }
        guard maxBodyBytes > 0 else { throw fail("maxBodyBytes must be positive") }
        guard listenBacklog > 0 else { throw fail("listenBacklog must be positive") }
        guard shutdownRetryAfterSeconds >= 0 else { throw fail("shutdownRetryAfterSeconds must not be negative") }
        guard requestMemoryWait >= .zero else { throw fail("requestMemoryWait must not be negative") }
        guard headerTimeout > .zero else { throw fail("headerTimeout must be positive") }
        guard bodyTimeout > .zero else { throw fail("bodyTimeout must be positive") }
        guard minBodyBytesPerSecond >= 0 else { throw fail("minBodyBytesPerSecond must not be negative") }
        guard maxQueryParameters > 0 else { throw fail("maxQueryParameters must be positive") }
    }

    /// ``idleTimeout`` in whole seconds, rounded up, at least 1.
    var idleTimeoutSeconds: UInt32 {
        let parts = idleTimeout.components
        let seconds = parts.seconds + (parts.attoseconds > 0 ? 1 : 0)
        return UInt32(clamping: max(1, seconds))
    }
}
