import MsgTrans
import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@testable import MsgTransRuntime

@Suite("Inbound requests: bounds, failures, reverse requests, shutdown", .serialized)
struct InboundTests {
    @Test("requests beyond the inbound bound get the overload reply from the runtime")
    func inboundOverload() async throws {
        var configuration = MsgTransServerConfiguration()
        configuration.connection.maxConcurrentInboundRequests = 2
        configuration.connection.overloadResponder = { header in
            MsgTransReply(bytes("429 for biz \(header.bizType)"))
        }
        let (gate, arrived, server, client) = try await startGatedServer(configuration: configuration)
        let first = Task { try await client.request(bizType: 5, payload: bytes("a")) }
        let second = Task { try await client.request(bizType: 5, payload: bytes("b")) }
        await arrived.wait(untilAtLeast: 2)
        let third = try await client.request(bizType: 6, payload: bytes("c"))
        #expect(third.payload == bytes("429 for biz 6"))
        #expect(third.bizType == 6)
        #expect(server.statistics.snapshot().overloadReplies == 1)
        #expect(arrived.value == 2)
        gate.open()
        #expect(try await first.value.payload == bytes("a"))
        #expect(try await second.value.payload == bytes("b"))
        await server.shutdown(closing: client)
    }

    @Test("a peer that sends requests without reading is slowed down, then served in full")
    func readingPausesWhileOutputIsFull() async throws {
        var configuration = MsgTransServerConfiguration()
        configuration.connection.maxOutboundBufferBytes = 64 << 10
        configuration.connection.maxConcurrentInboundRequests = 2000
        // 1000 replies of 64 KiB (64 MB) are far beyond what loopback socket buffers can absorb
        // (16 KiB replies were once all absorbed by autotuned buffers on a loaded machine).
        let reply = [UInt8](repeating: 1, count: 64 << 10)
        let server = try await startServer(configuration: configuration) { _ in
            MsgTransRequestHandler { _, _ in MsgTransReply(reply) }
        }
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        func requests(_ ids: ClosedRange<Int>) -> [UInt8] {
            var bytes: [UInt8] = []
            for id in ids {
                Frame.request(bizType: 5, id: UInt32(id), [UInt8](repeating: 2, count: 4 << 10)).encode(into: &bytes)
            }
            return bytes
        }
        // First 400 requests: their answers (25 MB) fill the socket buffers and the outbound
        // buffer, and the server stops reading. (Sending all 1000 at once let a loaded machine
        // read every request before the first handler had answered, so nothing was full yet.)
        // One writer, so the two parts never interleave; the second waits for `proceed`.
        let (proceed, go) = AsyncStream.makeStream(of: Void.self)
        let writing = Task {
            await raw.write(requests(1...400))
            for await _ in proceed { break }
            await raw.write(requests(401...1000))
        }
        // The server stopped reading: its outbound buffer is full and the socket takes no more.
        #expect(await eventually { server.statistics.snapshot().backPressuredConnections == 1 })
        go.yield()
        // A sleep: the time in which a server that kept reading would read the rest (a negative check).
        try await Task.sleep(for: .milliseconds(300))
        // 1000 answers (64 MB) cannot all be buffered: the server does not read the rest.
        #expect(server.statistics.snapshot().framesIn < 1000)
        var ids = Set<UInt32>()
        for _ in 1...1000 {
            let frame = try #require(await raw.readFrame())
            #expect(frame.payload.count == reply.count)
            ids.insert(frame.messageID)
        }
        await writing.value
        #expect(ids.count == 1000)
        // Everything was read and answered: nothing holds the connection back any more (the event
        // loop clears the gauge when it next finds the output drained, which can follow our last read).
        #expect(await eventually { server.statistics.snapshot().backPressuredConnections == 0 })
        await server.shutdown()
    }

    @Test("a handler that throws gets the failure reply; the connection stays open")
    func handlerFailure() async throws {
        struct Boom: Error {}
        let codes = Mutex<[MsgTransRuntimeError.Code]>([])
        var configuration = MsgTransServerConfiguration()
        configuration.connection.failureResponder = { header, error in
            codes.withLock { $0.append(error.code) }
            #expect(error.underlying is Boom)
            return MsgTransReply(bytes("500 for \(header.messageID)"), compression: .zstd)
        }
        let server = try await startServer(configuration: configuration) { _ in
            MsgTransRequestHandler { request, _ in
                if request.bizType == 13 { throw Boom() }
                return MsgTransReply(request.payload)
            }
        }
        let client = try await server.connectClient()
        let failed = try await client.request(bizType: 13, payload: bytes("explode"))
        #expect(failed.payload == bytes("500 for \(failed.messageID)"))
        #expect(failed.bizType == 13)
        #expect(try await client.request(bizType: 5, payload: bytes("fine")).payload == bytes("fine"))
        #expect(codes.withLock { $0 } == [.handlerFailed])
        #expect(server.statistics.snapshot().failureReplies == 1)
        await server.shutdown(closing: client)
    }

    @Test("a connection without a delegate answers inbound requests with the failure reply")
    func noHandler() async throws {
        let server = try await startServer { _ in
            MsgTransRequestHandler { request, connection in
                // Ask the client, which has no delegate.
                let answer = try await connection.request(bizType: 7, payload: bytes("anyone?"))
                return MsgTransReply(answer.payload)
            }
        }
        var configuration = MsgTransConfiguration()
        configuration.failureResponder = { _, error in MsgTransReply(bytes("client says \(error.code)")) }
        let client = try await MsgTransConnection.connect(
            host: "127.0.0.1", port: server.port, configuration: configuration)
        let response = try await client.request(bizType: 7, payload: [])
        #expect(response.payload == bytes("client says handlerFailed"))
        await server.shutdown(closing: client)
    }

    @Test("a handler can make a reverse request on the same connection without deadlock")
    func reverseRequest() async throws {
        let server = try await startServer { _ in
            MsgTransRequestHandler { request, connection in
                let reverse = try await connection.request(bizType: 7, payload: bytes("telemetry.flush"))
                return MsgTransReply(request.payload + bytes(" / ") + reverse.payload)
            }
        }
        let client = try await MsgTransConnection.connect(
            host: "127.0.0.1", port: server.port,
            delegate: MsgTransRequestHandler { request, _ in
                MsgTransReply(bytes("client handled ") + request.payload)
            })
        // More concurrent outer requests than the client's in-flight bound: reverse requests still flow.
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let response = try await client.request(bizType: 7, payload: bytes("outer \(index)"))
                    return response.payload == bytes("outer \(index) / client handled telemetry.flush")
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(results == 20)
        await server.shutdown(closing: client)
    }

    @Test("graceful shutdown lets running handlers answer, then closes")
    func gracefulShutdown() async throws {
        let (gate, arrived, server, client) = try await startGatedServer()
        let pending = Task { try await client.request(bizType: 5, payload: bytes("in flight")) }
        await arrived.wait(untilAtLeast: 1)
        let stopping = Task { await server.shutdown() }
        // The listener closes in the same loop step that starts the drain: wait for refused connects.
        let refusedConnect = await eventually {
            do {
                let probe = try await server.connectClient()
                await probe.close()
                return false
            } catch {
                return true
            }
        }
        #expect(refusedConnect)
        // New requests during the drain are refused with the overload reply, not dropped.
        let refused = try await client.request(bizType: 5, payload: bytes("late"))
        #expect(refused.payload == [])
        #expect(server.statistics.snapshot().overloadReplies == 1)
        gate.open()
        #expect(try await pending.value.payload == bytes("in flight"))
        await stopping.value
        #expect(await client.waitUntilClosed().code == .connectionClosed)
        #expect(server.statistics.snapshot().openConnections == 0)
        let error = await #expect(throws: MsgTransRuntimeError.self) {
            _ = try await server.connectClient()
        }
        #expect(error?.code == .connectFailed)
    }

    @Test("shutdown closes connections whose handlers outlive the grace period")
    func shutdownGracePeriod() async throws {
        let time = ManualClock()
        let loop = try MsgTransEventLoop(name: "grace-test", clock: time.clock)
        var configuration = MsgTransServerConfiguration()
        configuration.shutdownGracePeriod = .milliseconds(100)
        let (gate, arrived, server, client) = try await startGatedServer(configuration: configuration, loop: loop)
        let pending = Task { try await client.request(bizType: 5, payload: bytes("stuck")) }
        await arrived.wait(untilAtLeast: 1)
        let stopping = Task { await server.shutdown() }
        // The handler is still running: the loop sleeps on the clock until the grace period is over.
        #expect(await eventually { time.sleeperDeadlines.contains(.milliseconds(100)) })
        #expect(!client.isClosed)
        time.advance(by: .milliseconds(100))
        await stopping.value
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await pending.value }
        #expect(error?.code == .connectionClosed)
        gate.open()
        await loop.shutdown()
    }

    @Test("run() returns after shutdown and shuts down when its task is cancelled")
    func runLifecycle() async throws {
        let server = try await startServer()
        let running = Task { await server.run() }
        let client = try await server.connectClient()
        #expect(try await client.request(bizType: 1, payload: bytes("up")).payload == bytes("up"))
        running.cancel()
        await running.value
        #expect(await client.waitUntilClosed().code == .connectionClosed)
    }
}
