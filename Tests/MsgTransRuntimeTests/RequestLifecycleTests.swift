import MsgTrans
import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@testable import MsgTransRuntime

@Suite("Request lifecycle: timeout, cancellation, close, back-pressure", .serialized)
struct RequestLifecycleTests {
    /// Request number `index` of a race: biz 5 with payload `index % 100` (the server waits that
    /// many 40 µs steps before it answers) and a deadline of 100 µs to 4.3 ms, so that responses,
    /// timeouts and cancellations collide.
    static func racingRequest(on client: MsgTransConnection, _ index: Int) -> Task<MsgTransMessage, any Error> {
        Task {
            try await client.request(
                bizType: 5, payload: [UInt8(index % 100)], timeout: .microseconds((index % 7) * 700 + 100))
        }
    }

    /// The runtime error's code, or "other".
    static func outcome(of error: any Error) -> String {
        (error as? MsgTransRuntimeError).map { "\($0.code)" } ?? "other"
    }

    @Test("a request without a response times out; the late response is counted as unmatched")
    func timeout() async throws {
        let time = ManualClock()
        let loop = try MsgTransEventLoop(name: "timeout-test", clock: time.clock)
        let (gate, arrived, server, client) = try await startGatedServer(loop: loop)
        let pending = Task {
            try await client.request(bizType: 5, payload: bytes("slow"), timeout: .milliseconds(100))
        }
        await arrived.wait(untilAtLeast: 1)
        // The loop sleeps on the clock until the request's deadline, 100 ms from now.
        #expect(await eventually { time.sleeperDeadlines.contains(.milliseconds(100)) })
        #expect(client.statistics.snapshot().requestTimeouts == 0)
        time.advance(by: .milliseconds(100))
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await pending.value }
        #expect(error?.code == .timeout)
        #expect(client.statistics.snapshot().requestTimeouts == 1)
        gate.open()
        #expect(await eventually { client.statistics.snapshot().unmatchedResponses == 1 })
        #expect(try await client.request(bizType: 5, payload: bytes("next")).payload == bytes("next"))
        await server.shutdown(closing: client)
        await loop.shutdown()
    }

    @Test("cancelling the awaiting task fails the request with cancelled and frees its slot")
    func cancellation() async throws {
        let (gate, arrived, server, client) = try await startGatedServer(maxOutstandingRequests: 1)
        let pending = Task { try await client.request(bizType: 5, payload: bytes("cancel me")) }
        await arrived.wait(untilAtLeast: 1)
        pending.cancel()
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await pending.value }
        #expect(error?.code == .cancelled)
        // The only slot is free again: this request is written (and waits for the gate like the first).
        let next = Task { try await client.request(bizType: 5, payload: bytes("after")) }
        await arrived.wait(untilAtLeast: 2)
        gate.open()
        #expect(try await next.value.payload == bytes("after"))
        #expect(await eventually { client.statistics.snapshot().unmatchedResponses == 1 })
        await server.shutdown(closing: client)
    }

    @Test("a task cancelled before it sends fails at once without writing")
    func cancelledBeforeSending() async throws {
        let server = try await startServer()
        let client = try await server.connectClient()
        let gate = Gate()
        let pending = Task {
            await gate.wait()
            return try await client.request(bizType: 5, payload: bytes("never"))
        }
        pending.cancel()
        gate.open()
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await pending.value }
        #expect(error?.code == .cancelled)
        #expect(try await client.request(bizType: 5, payload: bytes("ok")).payload == bytes("ok"))
        #expect(server.statistics.snapshot().framesIn == 1)
        await server.shutdown(closing: client)
    }

    @Test("closing locally fails every pending and waiting request with connectionClosed")
    func localCloseFailsPending() async throws {
        let (gate, arrived, server, client) = try await startGatedServer(maxOutstandingRequests: 2)
        let pending = (0..<4).map { index in
            Task { try await client.request(bizType: 5, payload: bytes("\(index)")) }
        }
        await arrived.wait(untilAtLeast: 2)
        await client.close()
        for task in pending {
            let error = await #expect(throws: MsgTransRuntimeError.self) { try await task.value }
            #expect(error?.code == .connectionClosed)
        }
        let after = await #expect(throws: MsgTransRuntimeError.self) {
            _ = try await client.request(bizType: 5, payload: [])
        }
        #expect(after?.code == .connectionClosed)
        gate.open()
        await server.shutdown()
    }

    @Test("the peer closing fails pending requests with connectionClosed")
    func peerCloseFailsPending() async throws {
        let (client, peer) = try await connectToRawPeer()
        let pending = Task { try await client.request(bizType: 5, payload: bytes("x")) }
        _ = try #require(await peer.readFrame())
        peer.shutdownWrite()
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await pending.value }
        #expect(error?.code == .connectionClosed)
        #expect(await client.waitUntilClosed().code == .connectionClosed)
    }

    @Test("the ninth caller waits for an in-flight slot instead of failing")
    func inFlightBackPressure() async throws {
        let (gate, arrived, server, client) = try await startGatedServer()
        let tasks = (0..<12).map { index in
            Task { try await client.request(bizType: 5, payload: bytes("r\(index)")) }
        }
        await arrived.wait(untilAtLeast: 8)
        // With the default bound of 8, the other four are held back on this side.
        #expect(await eventually { client.statistics.snapshot().waitingRequests == 4 })
        #expect(arrived.value == 8)
        #expect(server.statistics.snapshot().framesIn == 8)
        gate.open()
        var answered = 0
        for (index, task) in tasks.enumerated() where try await task.value.payload == bytes("r\(index)") {
            answered += 1
        }
        #expect(answered == 12)
        #expect(client.statistics.snapshot().waitingRequests == 0)
        await server.shutdown(closing: client)
    }

    @Test("waiting for a slot counts against the timeout")
    func slotWaitIsBoundedByTimeout() async throws {
        let time = ManualClock()
        let loop = try MsgTransEventLoop(name: "slot-wait-test", clock: time.clock)
        let (gate, arrived, server, client) = try await startGatedServer(maxOutstandingRequests: 1, loop: loop)
        let first = Task { try await client.request(bizType: 5, payload: bytes("first")) }
        await arrived.wait(untilAtLeast: 1)
        let second = Task {
            try await client.request(bizType: 5, payload: bytes("second"), timeout: .milliseconds(100))
        }
        #expect(await eventually { time.sleeperDeadlines.contains(.milliseconds(100)) })
        time.advance(by: .milliseconds(100))
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await second.value }
        #expect(error?.code == .timeout)
        #expect(server.statistics.snapshot().framesIn == 1)
        gate.open()
        #expect(try await first.value.payload == bytes("first"))
        await server.shutdown(closing: client)
        await loop.shutdown()
    }

    @Test("response, timeout, cancellation and close race to exactly one completion")
    func completionRace() async throws {
        var serverConfiguration = MsgTransServerConfiguration()
        // Timed-out requests keep their handlers busy; keep the server from answering "overloaded".
        serverConfiguration.connection.maxConcurrentInboundRequests = 1000
        let server = try await startServer(configuration: serverConfiguration) { _ in
            MsgTransRequestHandler { request, _ in
                // A sleep: a handler answering around the requests' deadline, so responses and
                // timeouts collide (the race is the behaviour under test).
                try? await Task.sleep(for: .microseconds(Int(request.payload[0]) * 40))
                return MsgTransReply(request.payload)
            }
        }
        var configuration = MsgTransConfiguration()
        configuration.maxOutstandingRequests = 64
        let client = try await MsgTransConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration)
        let outcomes = EventLog()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<400 {
                group.addTask {
                    let task = Self.racingRequest(on: client, index)
                    if index % 3 == 0 {
                        // A sleep: cancelling at staggered moments of the race under test.
                        try? await Task.sleep(for: .microseconds((index % 11) * 300))
                        task.cancel()
                    }
                    let outcome: String
                    do {
                        let response = try await task.value
                        outcome =
                            response.payload == [UInt8(index % 100)]
                            ? "response" : "wrong \(index) \(response.payload) id \(response.messageID)"
                    } catch {
                        outcome = Self.outcome(of: error)
                    }
                    outcomes.record(outcome)
                }
            }
        }
        let counts = outcomes.all.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
        #expect(counts.values.reduce(0, +) == 400)
        #expect(counts.keys.filter { $0.hasPrefix("wrong") }.isEmpty, "\(counts)")
        #expect(Set(counts.keys).isSubset(of: ["response", "timeout", "cancelled"]))
        // Every slot was released exactly once: 64 more requests all fit at once and complete.
        let fine = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    try await client.request(bizType: 6, payload: [UInt8(index)]).payload == [UInt8(index)]
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(fine == 64)
        #expect(client.statistics.snapshot().requestTimeouts == counts["timeout", default: 0])
        await client.close()

        // The same race with a local close in the middle: every request still ends exactly once.
        let second = try await MsgTransConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration)
        let closing = EventLog()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let task = Self.racingRequest(on: second, index)
                    if index % 3 == 0 {
                        task.cancel()
                    }
                    do {
                        _ = try await task.value
                        closing.record("response")
                    } catch {
                        closing.record(Self.outcome(of: error))
                    }
                }
            }
            group.addTask {
                // A sleep: the local close lands in the middle of the race under test.
                try? await Task.sleep(for: .milliseconds(2))
                await second.close()
            }
        }
        #expect(closing.all.count == 200)
        #expect(Set(closing.all).isSubset(of: ["response", "timeout", "cancelled", "connectionClosed"]))
        await server.shutdown()
    }

    @Test("a full outbound buffer makes one-way sends fail with overloaded")
    func oneWayOverloaded() async throws {
        var configuration = MsgTransConfiguration()
        configuration.maxOutboundBufferBytes = 1 << 20
        let (client, peer) = try await connectToRawPeer(configuration: configuration)  // the peer never reads
        let chunk = [UInt8](repeating: 7, count: 256 << 10)
        var sent = 0
        var refusal: MsgTransRuntimeError?
        while refusal == nil && sent < 1000 {
            do {
                try await client.send(bizType: 9, payload: chunk)
                sent += 1
            } catch {
                refusal = error
            }
        }
        #expect(refusal?.code == .overloaded)
        #expect(sent > 4)
        _ = peer
        await client.close()
    }
}
