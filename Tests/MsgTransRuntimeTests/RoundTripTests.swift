import MsgTrans
import Testing

@testable import MsgTransRuntime

@Suite("Round trips over real sockets", .serialized)
struct RoundTripTests {
    @Test("request/response over IPv4 echoes payload, biz type and message id")
    func roundTripIPv4() async throws {
        let server = try await startServer()
        let client = try await server.connectClient()
        let response = try await client.request(bizType: 5, payload: bytes("hello"))
        #expect(response.payload == bytes("hello"))
        #expect(response.bizType == 5)
        #expect(response.header.packetType == .response)
        #expect(response.messageID == 1)
        #expect(client.remoteAddress == "127.0.0.1:\(server.port)")
        await server.shutdown(closing: client)
        #expect(server.statistics.snapshot().openConnections == 0)
    }

    @Test("request/response over IPv6 loopback")
    func roundTripIPv6() async throws {
        let server = try await startServer(host: "::1")
        #expect(server.localAddress == "[::1]:\(server.port)")
        let client = try await MsgTransConnection.connect(host: "::1", port: server.port)
        let response = try await client.request(bizType: 7, payload: bytes("v6"))
        #expect(response.payload == bytes("v6"))
        #expect(client.localAddress.hasPrefix("[::1]:"))
        await server.shutdown(closing: client)
    }

    @Test("a host name is resolved off the cooperative pool")
    func connectByName() async throws {
        let server = try await startServer()
        let client = try await MsgTransConnection.connect(host: "localhost", port: server.port)
        let response = try await client.request(bizType: 2, payload: bytes("named"))
        #expect(response.payload == bytes("named"))
        await server.shutdown(closing: client)
    }

    @Test("compressed requests and responses round-trip")
    func compressedRoundTrip() async throws {
        let server = try await startServer { _ in
            MsgTransRequestHandler { request, _ in MsgTransReply(request.payload, compression: .zlib) }
        }
        let client = try await server.connectClient()
        let payload = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let response = try await client.request(bizType: 5, payload: payload, compression: .zstd)
        #expect(response.payload == payload)
        #expect(response.header.compression == .zlib)
        #expect(Int(response.header.payloadLength) < payload.count)
        await server.shutdown(closing: client)
    }

    @Test("many concurrent requests on several connections all get their own response")
    func manyConcurrentRequests() async throws {
        let server = try await startServer()
        var clients: [MsgTransConnection] = []
        for _ in 0..<4 {
            clients.append(try await server.connectClient())
        }
        let connections = clients
        let matched = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<800 {
                group.addTask {
                    let text = bytes("request-\(index)")
                    let response = try await connections[index % 4].request(
                        bizType: UInt8(index % 200 + 1), payload: text)
                    return response.payload == text && response.bizType == UInt8(index % 200 + 1)
                }
            }
            var matched = 0
            for try await ok in group where ok {
                matched += 1
            }
            return matched
        }
        #expect(matched == 800)
        let stats = server.statistics.snapshot()
        #expect(stats.framesIn == 800)
        #expect(stats.framesOut == 800)
        #expect(stats.openConnections == 4)
        for client in clients {
            await client.close()
        }
        await server.shutdown()
    }

    @Test("one-way messages reach the one-way handler")
    func oneWay() async throws {
        let received = Tally()
        let log = EventLog()
        struct OneWaySink: MsgTransConnectionDelegate {
            let received: Tally
            let log: EventLog
            func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws
                -> MsgTransReply
            { MsgTransReply([]) }
            func handleOneWay(_ message: MsgTransMessage, on connection: MsgTransConnection) async {
                log.record(String(decoding: message.payload, as: UTF8.self))
                received.increment()
            }
        }
        let server = try await startServer { _ in OneWaySink(received: received, log: log) }
        let client = try await server.connectClient()
        try await client.send(bizType: 9, payload: bytes("note"))
        await received.wait(untilAtLeast: 1)
        #expect(log.all == ["note"])
        await server.shutdown(closing: client)
    }
}
