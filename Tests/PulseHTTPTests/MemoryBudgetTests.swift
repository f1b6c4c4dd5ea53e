import PulseHTTP
import PulseTestSupport
import Testing

/// The request-memory budget at the HTTP server: reservations from `Content-Length` and chunk by
/// chunk, the wait, the 503, and the release when a request finishes.
@Suite struct MemoryBudgetTests {
    /// A 1,000-byte budget; each request reserves twice its wire size.
    static func configuration(_ budget: RequestMemoryBudget, wait: Duration) -> HTTPServerConfiguration {
        HTTPServerConfiguration(
            host: "127.0.0.1", port: 0, shutdownRetryAfterSeconds: 7, requestMemoryBudget: budget,
            requestMemoryWait: wait, requestMemoryEstimate: { _, wireBytes in wireBytes * 2 })
    }

    static let echo: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
        HTTPResponse(status: .ok, body: Array(String(request.memory?.bytes ?? -1).utf8))
    }

    /// Waits until the budget holds `bytes`.
    static func waitForReserved(_ budget: RequestMemoryBudget, _ bytes: Int) async -> Bool {
        await eventually(within: .seconds(20)) { budget.reservedBytes == bytes }
    }

    @Test func aDeclaredBodyIsReservedBeforeItIsReadAndReleasedAfterTheResponse() async throws {
        let budget = RequestMemoryBudget(limitBytes: 1000)
        try await withServer(Self.configuration(budget, wait: .seconds(1)), handler: Self.echo) { _, port in
            let connection = try RawHTTPConnection(port: port)
            defer { connection.close() }
            try connection.send("POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 300\r\n\r\n")
            #expect(await Self.waitForReserved(budget, 600))  // Nothing of the body sent yet.
            try connection.send(Array(repeating: 1, count: 300))
            let response = try await onThread { try connection.readResponse() }
            #expect(response.status == 200)
            #expect(response.bodyText == "600")  // The handler sees its reservation.
            #expect(await Self.waitForReserved(budget, 0))
        }
    }

    @Test func aRequestThatDoesNotFitWaitsAndIsServedWhenMemoryIsReleased() async throws {
        let budget = RequestMemoryBudget(limitBytes: 1000)
        try await withServer(Self.configuration(budget, wait: .seconds(30)), handler: Self.echo) { _, port in
            let holder = try RawHTTPConnection(port: port)
            defer { holder.close() }
            try holder.send("POST /hold HTTP/1.1\r\nHost: localhost\r\nContent-Length: 400\r\n\r\n")
            #expect(await Self.waitForReserved(budget, 800))
            // 2 × 300 does not fit next to 800: this request waits, suspended.
            let waiter = Task {
                try await onThread { () -> RawHTTPResponse in
                    let connection = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
                    defer { connection.close() }
                    try connection.sendRequest(method: "POST", target: "/wait", body: Array(repeating: 2, count: 300))
                    return try connection.readResponse()
                }
            }
            #expect(await eventually(within: .seconds(20)) { budget.waitingRequests == 1 })
            #expect(budget.reservedBytes == 800)
            try holder.send(Array(repeating: 1, count: 400))
            let held = try await onThread { try holder.readResponse() }
            #expect(held.status == 200)
            let waited = try await waiter.value
            #expect(waited.status == 200)
            #expect(waited.bodyText == "600")
            #expect(await Self.waitForReserved(budget, 0))
        }
    }

    @Test func aRequestThatFindsNoRoomWithinTheWaitGets503WithRetryAfter() async throws {
        let budget = RequestMemoryBudget(limitBytes: 1000)
        let handled = Counter()
        let handler: @Sendable (HTTPRequest) async -> HTTPResponse = { request in
            handled.increment()
            return await Self.echo(request)
        }
        try await withServer(Self.configuration(budget, wait: .milliseconds(300)), handler: handler) { _, port in
            let holder = try RawHTTPConnection(port: port)
            defer { holder.close() }
            try holder.send("POST /hold HTTP/1.1\r\nHost: localhost\r\nContent-Length: 400\r\n\r\n")
            #expect(await Self.waitForReserved(budget, 800))
            // A declared body and a chunked one that grows past the room left.
            let declared = try await onThread { () -> RawHTTPResponse in
                let connection = try RawHTTPConnection(port: port)
                defer { connection.close() }
                try connection.sendRequest(method: "POST", target: "/declared", body: Array(repeating: 2, count: 300))
                return try connection.readResponse()
            }
            let chunked = try await onThread { () -> RawHTTPResponse in
                let connection = try RawHTTPConnection(port: port)
                defer { connection.close() }
                let chunk = "32\r\n" + String(repeating: "c", count: 50) + "\r\n"
                try connection.send(
                    "POST /chunked HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + String(repeating: chunk, count: 4) + "0\r\n\r\n")
                return try connection.readResponse()
            }
            for response in [declared, chunked] {
                #expect(response.status == 503)
                #expect(response.header("Retry-After") == "7")
                #expect(response.header("Connection")?.lowercased() == "close")
            }
            #expect(handled.current == 0)
            // The refused requests hold nothing: each releases its reservation when libmicrohttpd completes
            // it, which can follow the client's reading of the 503.
            #expect(await Self.waitForReserved(budget, 800))
            try holder.send(Array(repeating: 1, count: 400))
            #expect(try await onThread { try holder.readResponse() }.status == 200)
            #expect(await Self.waitForReserved(budget, 0))
        }
    }

    @Test func aRequestLargerThanTheWholeBudgetIsServedAlone() async throws {
        let budget = RequestMemoryBudget(limitBytes: 1000)
        try await withServer(Self.configuration(budget, wait: .seconds(1)), handler: Self.echo) { _, port in
            let response = try await onThread { () -> RawHTTPResponse in
                let connection = try RawHTTPConnection(port: port)
                defer { connection.close() }
                try connection.sendRequest(method: "POST", target: "/big", body: Array(repeating: 3, count: 900))
                return try connection.readResponse()
            }
            #expect(response.status == 200)
            #expect(response.bodyText == "1000")  // Capped at the budget.
            #expect(await Self.waitForReserved(budget, 0))
        }
    }
}
