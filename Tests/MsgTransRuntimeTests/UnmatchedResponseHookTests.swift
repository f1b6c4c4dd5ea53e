import MsgTrans
import Synchronization
import Testing

@testable import MsgTransRuntime

/// Closes on an unmatched response only while nothing else has arrived (a first-frame rule).
final class FirstFrameDelegate: MsgTransConnectionDelegate {
    let sawFrame = Mutex(false)

    func admit(_ header: FrameHeader, on connection: MsgTransConnection) -> MsgTransAdmission {
        sawFrame.withLock { $0 = true }
        return .dispatch
    }

    func handleRequest(_ request: MsgTransMessage, on connection: MsgTransConnection) async throws -> MsgTransReply {
        MsgTransReply(request.payload)
    }

    func closesOnUnmatchedResponse(_ header: FrameHeader, on connection: MsgTransConnection) -> Bool {
        !sawFrame.withLock { $0 }
    }
}

@Suite struct UnmatchedResponseHookTests {
    @Test("a delegate may close the connection at an unmatched response; by default it stays open")
    func closesOnlyWhenTheDelegateSaysSo() async throws {
        let server = try await startServer { _ in FirstFrameDelegate() }
        let first = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        await first.write(Frame(packetType: .response, bizType: 1, messageID: 9, payload: bytes("{}")).encoded())
        #expect(await first.readToEnd() == [])

        let later = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        await later.write(Frame.request(bizType: 1, id: 1, bytes("hi")).encoded())
        #expect(await later.readFrame()?.payload == bytes("hi"))
        await later.write(Frame(packetType: .response, bizType: 1, messageID: 9, payload: bytes("{}")).encoded())
        await later.write(Frame.request(bizType: 1, id: 2, bytes("still")).encoded())
        #expect(await later.readFrame()?.payload == bytes("still"))

        let stats = server.statistics.snapshot()
        #expect(stats.unmatchedResponses == 2)
        #expect(stats.admissionCloses == 1)
        await server.shutdown()
    }

    @Test("the default keeps the connection open at an unmatched response")
    func defaultKeepsTheConnection() async throws {
        let server = try await startServer()
        let raw = await RawSocket.connect(host: "127.0.0.1", port: server.port)
        await raw.write(Frame(packetType: .response, bizType: 1, messageID: 9, payload: bytes("{}")).encoded())
        await raw.write(Frame.request(bizType: 3, id: 1, bytes("echo")).encoded())
        #expect(await raw.readFrame()?.payload == bytes("echo"))
        #expect(server.statistics.snapshot().admissionCloses == 0)
        await server.shutdown()
    }
}
