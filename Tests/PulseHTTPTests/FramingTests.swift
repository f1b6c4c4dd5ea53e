import PulseHTTP
import PulseTestSupport
import Testing

/// Request-smuggling shapes (RFC 9112 §5.1, §6.1, §6.3), sent as raw bytes with a second request
/// hidden in the body: each must be refused before the body is read, the connection closed, and the
/// hidden request never reach the handler.
@Suite struct FramingTests {
    static let hidden = "GET /hidden HTTP/1.1\r\nHost: localhost\r\n\r\n"

    /// Sends `head` + `body`, reads the one response and what follows it until the server closes.
    private func exchange(_ raw: String) async throws -> (
        status: Int, connection: String?, rest: [UInt8], paths: [String]
    ) {
        let paths = Collector<String>()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            paths.append(request.path)
            return HTTPResponse(status: .ok, body: Array("ok".utf8))
        }
        return try await withServer(handler: handler) { _, port in
            let (response, rest) = try await onThread {
                let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 20)
                try connection.send(raw)
                let response = try connection.readResponse()
                return (response, try connection.readUntilClosed())
            }
            return (response.status, response.header("Connection"), rest, paths.all)
        }
    }

    @Test func contentLengthWithChunkedIs400AndCloses() async throws {
        let outcome = try await exchange(
            "POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                + Self.hidden)
        #expect(outcome.status == 400)
        #expect(outcome.connection?.lowercased() == "close")
        #expect(outcome.rest.isEmpty)
        #expect(outcome.paths.isEmpty)
    }

    @Test(arguments: [("0", String(hidden.utf8.count)), (String(hidden.utf8.count), "0"), ("33", "33")])
    func twoContentLengthsAre400AndClose(first: String, second: String) async throws {
        let outcome = try await exchange(
            "POST /b HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(first)\r\nContent-Length: \(second)\r\n\r\n"
                + Self.hidden)
        #expect(outcome.status == 400)
        #expect(outcome.connection?.lowercased() == "close")
        #expect(outcome.rest.isEmpty)
        #expect(outcome.paths.isEmpty)
    }

    @Test(arguments: ["Content-Length :", "Content-Length\t:"])
    func whitespaceBeforeTheColonIs400AndCloses(name: String) async throws {
        let outcome = try await exchange(
            "POST /c HTTP/1.1\r\nHost: localhost\r\n\(name) \(Self.hidden.utf8.count)\r\n\r\n" + Self.hidden)
        #expect(outcome.status == 400)
        #expect(outcome.connection?.lowercased() == "close")
        #expect(outcome.rest.isEmpty)
        #expect(outcome.paths.isEmpty)
    }

    @Test(arguments: ["gzip", "gzip, chunked", "identity"])
    func unknownTransferCodingIs501AtOnce(coding: String) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        // The body is never finished: without the check the server would wait for the client to close.
        let outcome = try await exchange(
            "POST /d HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: \(coding)\r\n\r\nabc")
        #expect(outcome.status == 501)
        #expect(outcome.connection?.lowercased() == "close")
        #expect(outcome.paths.isEmpty)
        #expect(clock.now - start < .seconds(10))
    }

    @Test(arguments: ["chunked, chunked", "chunked\r\nTransfer-Encoding: chunked"])
    func chunkedTwiceIs400(value: String) async throws {
        let outcome = try await exchange(
            "POST /e HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: \(value)\r\n\r\n0\r\n\r\n")
        #expect(outcome.status == 400)
        #expect(outcome.paths.isEmpty)
    }

    @Test func invalidContentLengthIs400() async throws {
        let outcome = try await exchange("POST /f HTTP/1.1\r\nHost: localhost\r\nContent-Length: +3\r\n\r\nabc")
        #expect(outcome.status == 400)
        #expect(outcome.paths.isEmpty)
    }

    @Test func plainChunkedAndContentLengthStillWork() async throws {
        let paths = Collector<String>()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            paths.append(request.path)
            return HTTPResponse(status: .ok, body: request.body)
        }
        try await withServer(handler: handler) { _, port in
            let (chunked, sized) = try await onThread {
                let connection = try RawHTTPConnection(port: port)
                try connection.send(
                    "POST /one HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
                let chunked = try connection.readResponse()
                try connection.sendRequest(method: "POST", target: "/two", body: Array("xyz".utf8))
                return (chunked, try connection.readResponse())
            }
            #expect(chunked.status == 200)
            #expect(chunked.bodyText == "abc")
            #expect(sized.status == 200)
            #expect(sized.bodyText == "xyz")
            #expect(paths.all == ["/one", "/two"])
        }
    }

    @Test(arguments: [300, 600, 5000])
    func tooManyQueryParametersAre414(count: Int) async throws {
        let target = "/q?" + (0..<count).map { "p\($0)=1" }.joined(separator: "&")
        let outcome = try await exchange("GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
        // 5000 parameters are over the request-line limit itself; libmicrohttpd or the check answers.
        #expect(outcome.status == 414)
        #expect(outcome.rest.isEmpty)
        #expect(outcome.paths.isEmpty)
    }

    @Test func queryParametersUpToTheLimitAreProcessed() async throws {
        let seen = Collector<Int>()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            seen.append(request.query.count)
            return HTTPResponse(status: .ok)
        }
        try await withServer(handler: handler) { _, port in
            let target = "/q?" + (0..<256).map { "p\($0)=1" }.joined(separator: "&")
            let response = try await RawHTTPConnection.exchange(
                port: port, raw: "GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n")
            #expect(response.status == 200)
            #expect(seen.all == [256])
        }
    }

    @Test func smallHeaderPoolLowersTheParameterLimit() async throws {
        // 200 parameters are within maxQueryParameters but do not fit a 4 KiB pool.
        let configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, headerMemoryLimit: 4096)
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in HTTPResponse(status: .ok) }
        try await withServer(configuration, handler: handler) { _, port in
            let target = "/q?" + (0..<200).map { "p\($0)=1" }.joined(separator: "&")
            let response = try await RawHTTPConnection.exchange(
                port: port, raw: "GET \(target) HTTP/1.1\r\nHost: localhost\r\n\r\n", receiveTimeoutSeconds: 20)
            #expect(response.status == 414)
        }
    }
}
