import PulseHTTP
import PulseTestSupport
import Testing

@Suite struct RoundTripTests {
    /// Echoes what the server saw, so the client can check parsing end to end.
    static let echo: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
        var headers: HTTPHeaders = ["Content-Type": "application/octet-stream"]
        headers.add(name: "X-Method", value: request.method.rawValue)
        headers.add(name: "X-Path", value: request.path)
        headers.add(
            name: "X-Query", value: request.query.map { "\($0.name)=\($0.value ?? "<nil>")" }.joined(separator: "&"))
        headers.add(name: "X-Custom-Seen", value: request.headers["x-custom"] ?? "<missing>")
        headers.add(name: "X-Remote-Host", value: request.remoteAddress?.host ?? "<unknown>")
        headers.add(name: "X-Remote-Port", value: String(request.remoteAddress?.port ?? 0))
        headers.add(name: "Content-Length", value: "999")  // Must be ignored: the server frames the body.
        return HTTPResponse(status: .ok, headers: headers, body: request.body)
    }

    @Test func getRoundTrip() async throws {
        try await withServer(handler: Self.echo) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port, target: "/v1/hello%20world?a=1&b=x%2By&flag", headers: [("X-CUSTOM", "Yes")])
            #expect(response.status == 200)
            #expect(response.header("X-Method") == "GET")
            #expect(response.header("X-Path") == "/v1/hello world")
            #expect(response.header("X-Query") == "a=1&b=x+y&flag=<nil>")
            #expect(response.header("X-Custom-Seen") == "Yes")
            #expect(response.header("X-Remote-Host") == "127.0.0.1")
            #expect(response.header("Content-Length") == "0")
            #expect(response.body.isEmpty)
        }
    }

    @Test func postRoundTripKeepsBinaryBody() async throws {
        let payload: [UInt8] = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await withServer(handler: Self.echo) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port, method: "POST", target: "/v1/traces", body: payload)
            #expect(response.status == 200)
            #expect(response.header("X-Method") == "POST")
            #expect(response.header("Content-Length") == String(payload.count))
            #expect(response.body == payload)
        }
    }

    @Test func keepAliveServesTwoRequestsOnOneConnection() async throws {
        try await withServer(handler: Self.echo) { _, port in
            let (first, second) = try await onThread {
                let connection = try RawHTTPConnection(port: port)
                try connection.sendRequest(method: "POST", target: "/one", body: Array("first".utf8))
                let first = try connection.readResponse()
                try connection.sendRequest(method: "POST", target: "/two", body: Array("second".utf8))
                let second = try connection.readResponse()
                return (first, second)
            }
            #expect(first.bodyText == "first")
            #expect(second.bodyText == "second")
            #expect(second.header("X-Path") == "/two")
            #expect(first.header("Connection")?.lowercased() != "close")
            // Same client port: the second request really travelled on the first connection.
            #expect(first.header("X-Remote-Port") == second.header("X-Remote-Port"))
        }
    }

    @Test func suspendedHandlerAnswersWhenItReturns() async throws {
        let entered = Gate()
        let release = Gate()
        let handler = holding(entered: entered, release: release) {
            // A sleep: the handler is still suspended after the release, the behaviour under test.
            try? await Task.sleep(for: .milliseconds(20))
            return textResponse("late answer")
        }
        try await withServer(handler: handler) { _, port in
            let connection = try RawHTTPConnection(port: port)
            try connection.sendRequest(target: "/slow")
            await entered.wait()
            // The handler is parked: the connection is suspended and nothing has been sent.
            #expect(connection.nothingPending())
            release.open()
            let response = try await onThread { try connection.readResponse() }
            #expect(response.status == 200)
            #expect(response.bodyText == "late answer")
        }
    }

    @Test func fiftyConcurrentRequests() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            // A sleep: a slow handler, so the fifty requests are in flight at once (the behaviour under test).
            try? await Task.sleep(for: .milliseconds(10))
            return HTTPResponse(status: .ok, body: request.body)
        }
        try await withServer(handler: handler) { _, port in
            let bodies = try await withThrowingTaskGroup(of: (Int, String).self) { group in
                for index in 0..<50 {
                    group.addTask {
                        let response = try await RawHTTPConnection.exchange(
                            port: port, method: "POST", target: "/n", body: Array("request-\(index)".utf8))
                        return (index, response.bodyText)
                    }
                }
                var collected: [Int: String] = [:]
                for try await (index, body) in group { collected[index] = body }
                return collected
            }
            #expect(bodies.count == 50)
            for index in 0..<50 { #expect(bodies[index] == "request-\(index)") }
        }
    }

    @Test func chunkedRequestBodyIsReassembled() async throws {
        try await withServer(handler: Self.echo) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port,
                raw: "POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n1;ext=1\r\n \r\n6\r\nworld!\r\n0\r\n\r\n")
            #expect(response.status == 200)
            #expect(response.bodyText == "hello world!")
        }
    }

    @Test func clientDisconnectingMidHandlerDoesNotHurtTheServer() async throws {
        let entered = Gate()
        let release = Gate()
        let finished = Gate()
        let handler = holding("/abandoned", others: textResponse("still here"), entered: entered, release: release) {
            finished.open()
            return textResponse(String(repeating: "x", count: 100_000))
        }
        try await withServer(handler: handler) { server, port in
            let doomed = try RawHTTPConnection(port: port)
            try doomed.sendRequest(target: "/abandoned")
            await entered.wait()
            doomed.close()
            release.open()
            await finished.wait()
            // The abandoned response goes nowhere; other clients are served as usual.
            for _ in 0..<3 {
                let response = try await RawHTTPConnection.exchange(port: port, target: "/other")
                #expect(response.bodyText == "still here")
            }
            #expect(finished.isOpen)
            #expect(server.port == port)
        }
    }

    @Test func handlerHeadersAndStatusReachTheClient() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in
            HTTPResponse(
                status: .tooManyRequests,
                headers: ["Retry-After": "7", "X-Bad": "split\r\nInjected: yes", "Content-Type": "application/json"],
                body: Array("{}".utf8))
        }
        try await withServer(handler: handler) { _, port in
            let response = try await RawHTTPConnection.exchange(
                port: port, method: "POST", target: "/v1/logs", body: Array("{}".utf8))
            #expect(response.status == 429)
            #expect(response.header("Retry-After") == "7")
            #expect(response.header("Content-Type") == "application/json")
            #expect(response.header("Injected") == nil)
            #expect(response.header("X-Bad") == nil)
            #expect(response.bodyText == "{}")
        }
    }
}
