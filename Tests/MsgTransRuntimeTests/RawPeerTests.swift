import Glibc
import MsgTrans
import PulseKit
import PulseTestSupport
import Synchronization
import Testing

@testable import MsgTransRuntime

@Suite("Hand-written peers on raw sockets", .serialized)
struct RawPeerTests {
    @Test("a request drip-fed one byte per write still decodes and is answered")
    func dripFedBytes() async throws {
        let server = try await startServer()
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        let request = Frame.request(bizType: 100, id: 0x0102_0304, bytes("drip-fed payload"))
        await raw.dripFeed(request.encoded())
        let response = try #require(await raw.readFrame())
        #expect(response.packetType == .response)
        #expect(response.messageID == 0x0102_0304)
        #expect(response.bizType == 100)
        #expect(response.payload == bytes("drip-fed payload"))
        #expect(server.statistics.snapshot().bytesIn == request.encodedLength)
        await server.shutdown()
    }

    @Test("many frames in one write are all answered")
    func manyFramesInOneWrite() async throws {
        let server = try await startServer()
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        var batch: [UInt8] = []
        for id in 1...50 {
            Frame.request(bizType: 5, id: UInt32(id), bytes("frame \(id)")).encode(into: &batch)
        }
        await raw.write(batch)
        var answered: [UInt32: [UInt8]] = [:]
        for _ in 1...50 {
            let response = try #require(await raw.readFrame())
            answered[response.messageID] = response.payload
        }
        #expect(answered.count == 50)
        #expect((1...50).allSatisfy { answered[UInt32($0)] == bytes("frame \($0)") })
        await server.shutdown()
    }

    @Test("a peer that half-closes after its request still gets the response")
    func halfClose() async throws {
        let server = try await startServer()
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        await raw.write(Frame.request(bizType: 3, id: 9, bytes("last words")).encoded())
        raw.shutdownWrite()
        let response = try #require(await raw.readFrame())
        #expect(response.messageID == 9)
        #expect(response.payload == bytes("last words"))
        #expect(await raw.readToEnd() == [])
        #expect(await eventually { server.statistics.snapshot().openConnections == 0 })
        await server.shutdown()
    }

    @Test("a bad version closes only that connection; another stays usable")
    func protocolErrorClosesOnlyThatConnection() async throws {
        let server = try await startServer()
        let good = try await server.connectClient()
        let bad = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        var frame = Frame.request(bizType: 1, id: 1, bytes("{}")).encoded()
        frame[0] = 2
        await bad.write(frame)
        #expect(await bad.readToEnd() == [])
        #expect(await eventually { server.statistics.snapshot().protocolFaults == 1 })
        let response = try await good.request(bizType: 5, payload: bytes("still fine"))
        #expect(response.payload == bytes("still fine"))
        #expect(!good.isClosed)
        #expect(server.statistics.snapshot().openConnections == 1)
        await good.close()
        await server.shutdown()
    }

    @Test("a client receiving a bad frame fails its pending requests with protocolViolation")
    func clientProtocolViolation() async throws {
        let (client, peer) = try await connectToRawPeer()
        let pending = Task { try await client.request(bizType: 5, payload: bytes("x")) }
        _ = try #require(await peer.readFrame())
        await peer.write([9, 0, 2, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0])
        let error = await #expect(throws: MsgTransRuntimeError.self) { try await pending.value }
        #expect(error?.code == .protocolViolation)
        #expect(await client.waitUntilClosed().code == .protocolViolation)
        #expect(client.statistics.snapshot().protocolFaults == 1)
    }

    @Test("unmatched and duplicate responses are counted and never reach a handler")
    func unmatchedResponsesServerSide() async throws {
        let calls = Tally()
        let server = try await startServer { _ in EchoDelegate(calls: calls) }
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        var burst: [UInt8] = []
        Frame(packetType: .response, bizType: 5, messageID: 999, payload: bytes("stray")).encode(into: &burst)
        Frame(packetType: .response, bizType: 5, messageID: 999, payload: bytes("stray")).encode(into: &burst)
        Frame.request(bizType: 5, id: 1, bytes("real")).encode(into: &burst)
        await raw.write(burst)
        let response = try #require(await raw.readFrame())
        #expect(response.messageID == 1)
        #expect(response.payload == bytes("real"))
        let stats = server.statistics.snapshot()
        #expect(stats.unmatchedResponses == 2)
        #expect(calls.value == 1)
        await server.shutdown()
    }

    @Test("a duplicate response completes nothing twice; biz type 0 responses are accepted and counted")
    func duplicateAndBizZeroResponsesClientSide() async throws {
        let (client, peer) = try await connectToRawPeer()

        let first = Task { try await client.request(bizType: 5, payload: bytes("one")) }
        let request = try #require(await peer.readFrame())
        var answer: [UInt8] = []
        let reply = Frame(packetType: .response, bizType: 5, messageID: request.messageID, payload: bytes("ack"))
        reply.encode(into: &answer)
        reply.encode(into: &answer)
        await peer.write(answer)
        #expect(try await first.value.payload == bytes("ack"))

        let second = Task { try await client.request(bizType: 6, payload: bytes("two")) }
        let next = try #require(await peer.readFrame())
        #expect(next.messageID != request.messageID)
        await peer.write(
            Frame(packetType: .response, bizType: 0, messageID: next.messageID, payload: bytes("rust")).encoded())
        let response = try await second.value
        #expect(response.payload == bytes("rust"))
        #expect(response.bizType == 0)

        let stats = client.statistics.snapshot()
        #expect(stats.unmatchedResponses == 1)
        #expect(stats.bizTypeMismatches == 1)
        await client.close()
    }

    @Test("an undecodable compressed request gets the failure reply and the connection stays open")
    func malformedPayload() async throws {
        let seen = Mutex<[MsgTransRuntimeError.Code]>([])
        var configuration = MsgTransServerConfiguration()
        configuration.connection.failureResponder = { header, error in
            seen.withLock { $0.append(error.code) }
            return MsgTransReply(bytes("400 for \(header.messageID)"))
        }
        let calls = Tally()
        let server = try await startServer(configuration: configuration) { _ in EchoDelegate(calls: calls) }
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        let garbage = Frame(compression: .zstd, packetType: .request, bizType: 5, messageID: 4, payload: [1, 2, 3, 4])
        await raw.write(garbage.encoded())
        let response = try #require(await raw.readFrame())
        #expect(response.messageID == 4)
        #expect(response.payload == bytes("400 for 4"))
        #expect(seen.withLock { $0 } == [.malformedPayload])
        #expect(calls.value == 0)
        await raw.write(Frame.request(bizType: 5, id: 5, bytes("ok")).encoded())
        #expect(try #require(await raw.readFrame()).payload == bytes("ok"))
        await server.shutdown()
    }

    @Test("the server closes connections beyond its limit at once")
    func connectionLimit() async throws {
        var configuration = MsgTransServerConfiguration()
        configuration.maxConnections = 1
        let server = try await startServer(configuration: configuration)
        let first = try await server.connectClient()
        _ = try await first.request(bizType: 1, payload: [])
        let second = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        #expect(await second.readToEnd() == [])
        #expect(server.statistics.snapshot().rejectedConnections == 1)
        #expect(try await first.request(bizType: 1, payload: bytes("a")).payload == bytes("a"))
        await first.close()
        await server.shutdown()
    }

    @Test("a connect that gets no answer fails with timeout")
    func connectTimeout() async throws {
        // A listener that never accepts, with the smallest backlog: once its queue is full the
        // kernel drops further SYNs, so the next connect hangs until its timeout.
        let listener = RawListener(backlog: 0)
        var configuration = MsgTransConfiguration()
        configuration.connectTimeout = .milliseconds(200)
        var opened: [MsgTransConnection] = []
        var timedOut = false
        for _ in 0..<8 where !timedOut {
            do {
                opened.append(
                    try await MsgTransConnection.connect(
                        host: "127.0.0.1", port: listener.port, configuration: configuration))
            } catch {
                #expect(error.code == .timeout)
                timedOut = true
            }
        }
        #expect(timedOut)
        for connection in opened {
            await connection.close()
        }
    }

    @Test("connecting to a closed port fails with connectFailed")
    func connectRefused() async throws {
        // A port that was just bound and released: nothing listens on it.
        let closedPort = { RawListener().port }()
        let error = await #expect(throws: MsgTransRuntimeError.self) {
            _ = try await MsgTransConnection.connect(host: "127.0.0.1", port: closedPort)
        }
        #expect(error?.code == .connectFailed)
    }
}
