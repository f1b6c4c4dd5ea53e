import PulseHTTP
import PulseTestSupport
import Testing

@Suite struct LimitTests {
    static let small = HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxBodyBytes: 1024)
    static let echo: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
        HTTPResponse(status: .ok, body: request.body)
    }

    /// A handler that counts the requests it gets and answers 200.
    static func counting(_ handled: Counter) -> @Sendable (HTTPRequest) async -> HTTPResponse {
        { _ in
            handled.increment()
            return HTTPResponse(status: .ok)
        }
    }

    @Test func declaredBodyOverTheLimitIs413BeforeTheBodyIsSent() async throws {
        try await withServer(Self.small, handler: Self.echo) { _, port in
            let (response, rest) = try await onThread {
                let connection = try RawHTTPConnection(port: port)
                // Only the head is sent: the server must answer without waiting for 5000 bytes.
                try connection.send("POST /big HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5000\r\n\r\n")
                let response = try connection.readResponse()
                return (response, try connection.readUntilClosed())
            }
            #expect(response.status == 413)
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(rest.isEmpty)  // And then it closed the connection.
        }
    }

    @Test func expectContinueOverTheLimitGets413InsteadOf100() async throws {
        try await withServer(Self.small, handler: Self.echo) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port,
                raw: "POST /big HTTP/1.1\r\nHost: localhost\r\nContent-Length: 999999\r\nExpect: 100-continue\r\n\r\n")
            #expect(response.status == 413)
        }
    }

    @Test func bodyExactlyAtTheLimitIsAccepted() async throws {
        let payload = [UInt8](repeating: 7, count: 1024)
        try await withServer(Self.small, handler: Self.echo) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port, method: "POST", target: "/edge", body: payload)
            #expect(response.status == 200)
            #expect(response.body == payload)
        }
    }

    @Test func chunkedBodyOverTheLimitIs413() async throws {
        let handled = Counter()
        try await withServer(Self.small, handler: Self.counting(handled)) { _, port in
            let response = try await onThread {
                let connection = try RawHTTPConnection(port: port)
                let chunk = String(repeating: "a", count: 600)
                try connection.send(
                    "POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(response.status == 413)
            #expect(handled.current == 0)
        }
    }

    @Test func endlessChunkedUploadGets413() async throws {
        let handled = Counter()
        try await withServer(Self.small, handler: Self.counting(handled)) { _, port in
            let (response, sent) = try await onThread { () -> (RawHTTPResponse, Int) in
                let connection = try RawHTTPConnection(port: port)
                try connection.send("POST /flood HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
                let chunk = "400\r\n" + String(repeating: "b", count: 1024) + "\r\n"
                // An upload that never ends: far past the limit, and past twice the limit (where the
                // server used to reset the connection), until the server stops taking bytes.
                var sent = 0
                while sent < 4096 {
                    do { try connection.send(chunk) } catch { break }
                    sent += 1
                    if sent > 2, !connection.nothingPending() { break }  // The answer is in.
                }
                return (try connection.readResponse(), sent)
            }
            #expect(response.status == 413)
            #expect(response.header("Connection")?.lowercased() == "close")
            #expect(response.body.isEmpty)
            #expect(sent < 4096)
            #expect(handled.current == 0)
        }
    }

    @Test func oversizedHeadersAreRejectedByTheServer() async throws {
        let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, headerMemoryLimit: 4096)
        try await withServer(configuration, handler: Self.echo) { _, port in
            let response = try await onThread {
                let connection = try RawHTTPConnection(port: port)
                let big = String(repeating: "h", count: 8000)
                try connection.send("GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: \(big)\r\n\r\n")
                return try connection.readResponse()
            }
            #expect(response.status == HTTPStatus.requestHeaderFieldsTooLarge.code)
        }
    }

    @Test func overlongRequestLineIs414() async throws {
        let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, headerMemoryLimit: 4096)
        try await withServer(configuration, handler: Self.echo) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port, raw: "GET /\(String(repeating: "u", count: 8000)) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(response.status == 414)
        }
    }

    @Test func stalledClientIsDisconnectedByTheIdleTimeout() async throws {
        let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, idleTimeout: .seconds(1))
        try await withServer(configuration, handler: Self.echo) { _, port in
            let leftover = try await onThread {
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 20)
                try connection.send("POST /slow HTTP/1.1\r\nHost: localhost\r\nContent-Length: 10\r\n\r\nabc")
                return try connection.readUntilClosed()  // Returns at EOF; throws if the server never closes.
            }
            #expect(leftover.isEmpty)
        }
    }
}
