import PulseHTTP
import PulseTestSupport
import Testing

/// ``HTTPServerConfiguration/earlyResponse`` sees, and may amend, every response the server makes
/// before the handler runs (the gateway stamps its request id there and explains the refusal).
@Suite struct EarlyResponseTests {
    /// A configuration whose hook records (method, path, status, a request header) and adds a header.
    private static func configuration(_ seen: Collector<String>) -> HTTPServerConfiguration {
        var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, maxBodyBytes: 100)
        configuration.earlyResponse = { request, response in
            seen.append(
                "\(request.method.rawValue) \(request.path) \(response.status.code) \(request.headers["X-Trace"] ?? "-")"
            )
            response.headers.set(name: "X-Seen", value: "yes")
        }
        return configuration
    }

    @Test(arguments: [
        ("POST /big HTTP/1.1\r\nHost: x\r\nX-Trace: t1\r\nContent-Length: 101\r\n\r\n", 413, "POST /big 413 t1"),
        (
            "POST /smuggle HTTP/1.1\r\nHost: x\r\nX-Trace: t2\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400,
            "POST /smuggle 400 t2"
        ),
        (
            "POST /chunked HTTP/1.1\r\nHost: x\r\nX-Trace: t4\r\nTransfer-Encoding: chunked\r\n\r\n80\r\n"
                + String(repeating: "x", count: 128) + "\r\n", 413, "POST /chunked 413 t4"
        ),
    ])
    func refusalsBeforeTheHandlerPassThroughTheHook(raw: String, status: Int, recorded: String) async throws {
        let seen = Collector<String>()
        let handled = Counter()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in
            handled.increment()
            return textResponse("ok")
        }
        let response = try await withServer(Self.configuration(seen), handler: handler) { _, port in
            try await RawHTTPConnection.exchange(port: port, raw: raw, receiveTimeoutSeconds: 20)
        }
        #expect(response.status == status)
        #expect(response.header("X-Seen") == "yes")
        #expect(seen.all == [recorded])
        #expect(handled.current == 0)
    }

    @Test func handledRequestsDoNotPassThroughTheHook() async throws {
        let seen = Collector<String>()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { _ in textResponse("ok") }
        let response = try await withServer(Self.configuration(seen), handler: handler) { _, port in
            try await RawHTTPConnection.exchange(
                port: port, method: "POST", target: "/ok", headers: [], body: Array("hi".utf8),
                receiveTimeoutSeconds: 20)
        }
        #expect(response.status == 200)
        #expect(response.header("X-Seen") == nil)
        #expect(seen.all.isEmpty)
    }

    @Test func aRequestRefusedForTheMemoryBudgetPassesThroughTheHook() async throws {
        let seen = Collector<String>()
        var configuration = Self.configuration(seen)
        configuration.requestMemoryBudget = RequestMemoryBudget(limitBytes: 60)
        configuration.requestMemoryWait = .milliseconds(50)
        let gate = Gate()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            if request.path == "/hold" { await gate.wait() }
            return textResponse("ok")
        }
        let refused = try await withServer(configuration, handler: handler) { _, port in
            let body = [UInt8](repeating: 0x61, count: 50)
            let holder = Task {
                try await RawHTTPConnection.exchange(
                    port: port, method: "POST", target: "/hold", headers: [], body: body, receiveTimeoutSeconds: 20)
            }
            // The holder's reservation is taken once its head is in; then the second cannot fit.
            #expect(await MemoryBudgetTests.waitForReserved(configuration.requestMemoryBudget, 50))
            let refused = try await RawHTTPConnection.exchange(
                port: port, method: "POST", target: "/second", headers: [("X-Trace", "t3")], body: body,
                receiveTimeoutSeconds: 20)
            gate.open()
            #expect(try await holder.value.status == 200)
            return refused
        }
        #expect(refused.status == 503)
        #expect(refused.header("X-Seen") == "yes")
        #expect(seen.all == ["POST /second 503 t3"])
    }
}
