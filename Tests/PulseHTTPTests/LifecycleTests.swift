import PulseHTTP
import PulseKit
import PulseTestSupport
import Testing

@Suite struct LifecycleTests {
    @Test func shutdownFinishesInFlightRequestAndRefusesNewOnes() async throws {
        let entered = Gate()
        let release = Gate()
        let handler = holding("/slow", others: textResponse("quick"), entered: entered, release: release) {
            textResponse("finished during shutdown")
        }
        let (server, port) = try startedServer(handler: handler)

        // An idle keep-alive connection that has already been served once.
        let idle = try RawHTTPConnection(port: port)
        try idle.sendRequest(target: "/quick")
        let before = try await onThread { try idle.readResponse() }
        #expect(before.bodyText == "quick")

        let inFlight = try RawHTTPConnection(port: port)
        try inFlight.sendRequest(target: "/slow")
        await entered.wait()

        let shutdown = Task { await server.shutdown(gracePeriod: .seconds(30)) }
        while !server.isShuttingDown { await Task.yield() }

        // A new request on an open connection during shutdown: 503 with Retry-After, then close.
        try idle.sendRequest(target: "/quick")
        let refused = try await onThread { try idle.readResponse() }
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "5")
        #expect(refused.header("Connection")?.lowercased() == "close")

        // A connection made during shutdown is closed at once, unserved (the accept policy refuses it;
        // it does not wait in the backlog until the grace period ends).
        let late = try RawHTTPConnection(port: port)
        defer { late.close() }
        #expect(try late.readUntilClosed().isEmpty)

        // The in-flight request still gets its real answer, and only then does shutdown finish.
        release.open()
        let finished = try await onThread { try inFlight.readResponse() }
        #expect(finished.status == 200)
        #expect(finished.bodyText == "finished during shutdown")
        await shutdown.value
        #expect(server.port == nil)
        #expect(throws: TestClientError.self) { try RawHTTPConnection(port: port) }
    }

    @Test func shutdownGracePeriodAnswersStuckHandlersWith503() async throws {
        let entered = Gate()
        let never = Gate()
        let handler = holding(entered: entered, release: never) { textResponse("too late") }
        let (server, port) = try startedServer(handler: handler)
        let stuck = try RawHTTPConnection(port: port)
        try stuck.sendRequest(target: "/stuck")
        await entered.wait()
        await server.shutdown(gracePeriod: .milliseconds(100))
        let response = try await onThread { try stuck.readResponse() }
        #expect(response.status == 503)
        never.open()  // The handler's late answer is dropped without touching freed state.
    }

    @Test func runReturnsWhenTheTaskIsCancelled() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { _ in
            textResponse("running")
        }
        let running = Task { try await server.run() }
        while server.port == nil { await Task.yield() }
        let port = try #require(server.port)
        let response = try await RawHTTPConnection.exchange(port: port, target: "/")
        #expect(response.bodyText == "running")
        running.cancel()
        try await running.value
        #expect(server.port == nil)
        #expect(server.isShuttingDown)
    }

    @Test func runReturnsAfterShutdown() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { _ in
            HTTPResponse(status: .noContent)
        }
        try server.start()
        let running = Task { try await server.run() }
        await server.shutdown()
        try await running.value
        #expect(server.port == nil)
    }

    @Test func startTwiceIsAnInvalidState() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { _ in
            HTTPResponse(status: .ok)
        }
        try server.start()
        let error = #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(error?.code == .invalidState)
        await server.shutdown()
        let again = #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(again?.code == .invalidState)
    }

    @Test func portInUseFailsToStart() async throws {
        let first = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { _ in
            HTTPResponse(status: .ok)
        }
        try first.start()
        let port = try #require(first.port)
        let second = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port)) { _ in
            HTTPResponse(status: .ok)
        }
        let error = #expect(throws: HTTPServerError.self) { try second.start() }
        #expect(error?.code == .startFailed)
        await first.shutdown()
    }

    @Test(arguments: [
        HTTPServerConfiguration(host: "example.com", port: 0),
        HTTPServerConfiguration(host: "127.0.0.1", port: 70_000),
        HTTPServerConfiguration(host: "127.0.0.1", port: 0, threadCount: 0),
        HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxBodyBytes: 0),
        HTTPServerConfiguration(host: "127.0.0.1", port: 0, idleTimeout: .zero),
    ])
    func invalidConfigurationIsRejected(configuration: HTTPServerConfiguration) {
        let server = HTTPServer(configuration: configuration) { _ in HTTPResponse(status: .ok) }
        let error = #expect(throws: HTTPServerError.self) { try server.start() }
        #expect(error?.code == .invalidConfiguration)
    }

    @Test func servesIPv6Loopback() async throws {
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "::1", port: 0)) { request in
            textResponse(request.remoteAddress?.description ?? "?")
        }
        do {
            try server.start()
        } catch {
            // A host without IPv6 cannot bind ::1; nothing to check there.
            #expect(error.code == .startFailed)
            return
        }
        let port = try #require(server.port)
        let response = try await onThread {
            let connection = try RawHTTPConnection(host: "::1", port: port)
            try connection.sendRequest(target: "/v6")
            return try connection.readResponse()
        }
        #expect(response.status == 200)
        #expect(response.bodyText.hasPrefix("[::1]:"))
        await server.shutdown()
    }

    @Test func droppingARunningServerStopsIt() async throws {
        var server: HTTPServer? = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0)) { _ in
            HTTPResponse(status: .ok)
        }
        try server?.start()
        let port = try #require(server?.port)
        server = nil
        #expect(throws: TestClientError.self) { try RawHTTPConnection(port: port) }
    }
}

@Suite struct ShutdownUnderLoadTests {
    /// Clients hammer the server, some hanging up before the answer, while it shuts down with a
    /// short grace period. Nothing may crash (libmicrohttpd aborts when stopped with a suspended
    /// connection), every answer that arrives is well formed, and the port is closed afterwards.
    @Test func shutdownUnderLoadIsClean() async throws {
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            let delay = Int(request.queryValue("ms") ?? "0") ?? 0
            // A sleep: a handler that takes the requested time, so shutdown meets requests in flight.
            try? await Task.sleep(for: .milliseconds(delay))
            return HTTPResponse(status: .ok, body: request.body)
        }
        let (server, port) = try startedServer(handler: handler)
        let statuses = Collector<Int>()
        let clients = (0..<8).map { client in
            Task {
                _ = try? await onThread {
                    for round in 0..<40 {
                        guard let connection = try? RawHTTPConnection(port: port, receiveTimeoutSeconds: 10) else {
                            return
                        }
                        let ms = (client * 7 + round * 13) % 40
                        try? connection.sendRequest(method: "POST", target: "/load?ms=\(ms)", body: [UInt8(round)])
                        if round % 5 == 0 {
                            connection.close()  // Hang up while the handler is still running.
                            continue
                        }
                        if let response = try? connection.readResponse() {
                            statuses.append(response.status)
                        }
                    }
                }
            }
        }
        // Shut down under load: once answers are flowing (not after a fixed time, which on a loaded
        // machine may pass before the first client connected).
        #expect(await eventually { !statuses.all.isEmpty })
        await server.shutdown(gracePeriod: .milliseconds(20))
        for client in clients { await client.value }
        let seen = statuses.all
        #expect(!seen.isEmpty)
        #expect(seen.allSatisfy { $0 == 200 || $0 == 503 })
        #expect(server.port == nil)
        #expect(throws: TestClientError.self) { try RawHTTPConnection(port: port) }
    }
}
