import Foundation
import MsgTrans
import MsgTransRuntime
import PulseTestSupport
import Testing

@testable import PulseIngest

/// Connections that never complete CLIENT_CONNECT, and incomplete frames held across connections,
/// are bounded; driven by raw TCP peers against the real ingest server.
@Suite struct ConnectionLimitTests {
    /// A 60 KiB heartbeat frame: its bytes held as an incomplete frame until the last one arrives.
    static func largeFrame(id: UInt32) throws -> [UInt8] {
        let padding = String(repeating: " ", count: 60 * 1024)
        return try Frame.make(
            packetType: .request, bizType: Biz.heartbeat, messageID: id, plaintext: Array("{\(padding)}".utf8),
            preferred: .none
        ).encoded()
    }

    @Test func silentConnectionsAreClosedAtTheConnectDeadline() async throws {
        let harness = try await Harness.start {
            $0.connectDeadline = .seconds(1)
            $0.transport.clock = $0.clock
        }
        var clients: [RawClient] = []
        for _ in 0..<100 { clients.append(await RawClient.connect(port: harness.server.port)) }
        // Every connection is accepted and its deadline armed on the transport's clock; none
        // closes before the test steps that clock past it.
        try await waitFor { harness.server.transportStatistics.openConnections == 100 }
        try await waitFor { harness.clock.sleeperDeadlines.contains(.seconds(1)) }
        #expect(harness.server.transportStatistics.establishTimeouts == 0)
        harness.clock.advance(by: .seconds(1))
        let closed = await withTaskGroup(of: Bool.self) { group in
            for client in clients { group.addTask { await client.readsEOFWithoutBytes() } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(closed == clients.count)
        #expect(harness.server.transportStatistics.establishTimeouts == 100)
        try await waitFor { harness.server.transportStatistics.openConnections == 0 }
        await harness.stop()
    }

    @Test func partialFirstFrameIsClosedAtTheConnectDeadline() async throws {
        let harness = try await Harness.start {
            $0.connectDeadline = .seconds(1)
            $0.transport.clock = $0.clock
        }
        let client = await RawClient.connect(port: harness.server.port)
        let connect = try Frame.make(
            packetType: .request, bizType: Biz.connect, messageID: 1, plaintext: Array(Fixture.connect().utf8),
            preferred: .none
        ).encoded()
        await client.write(Array(connect.prefix(connect.count / 2)))
        try await waitFor { harness.server.transportStatistics.partialFrameBytes > 0 }
        try await waitFor { harness.clock.sleeperDeadlines.contains(.seconds(1)) }
        harness.clock.advance(by: .seconds(1))
        #expect(await client.readsEOFWithoutBytes())
        #expect(harness.server.transportStatistics.establishTimeouts == 1)
        #expect(harness.server.transportStatistics.partialFrameBytes == 0)
        await harness.stop()
    }

    @Test func failedConnectDoesNotStopTheDeadline() async throws {
        let harness = try await Harness.start { $0.connectDeadline = .seconds(1) }
        let client = await RawClient.connect(port: harness.server.port)
        let response = try #require(await client.request(biz: Biz.connect, json: Fixture.connect(appId: "app_unknown")))
        #expect(response.code != 0)
        #expect(await client.readsEOFWithoutBytes())
        #expect(harness.server.transportStatistics.establishTimeouts == 1)
        await harness.stop()
    }

    @Test func connectedClientOutlivesTheConnectDeadline() async throws {
        let harness = try await Harness.start {
            $0.connectDeadline = .milliseconds(300)
            $0.transport.clock = $0.clock
        }
        let (client, connectionId) = try await harness.connectedClient()
        // Three times the deadline on the transport's clock, which the test steps.
        harness.clock.advance(by: .milliseconds(900))
        let heartbeat = try #require(
            await client.request(
                biz: Biz.heartbeat, json: #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#)
        )
        #expect(heartbeat.code == 0)
        #expect(harness.server.transportStatistics.establishTimeouts == 0)
        await harness.stop()
    }

    @Test func partialFramesAcrossConnectionsAreCapped() async throws {
        let harness = try await Harness.start { $0.transport.maxPartialFrameBytes = 100 * 1024 }
        let (first, _) = try await harness.connectedClient(Fixture.connect(device: "dev-1"))
        let (second, _) = try await harness.connectedClient(Fixture.connect(device: "dev-2"))
        let (third, _) = try await harness.connectedClient(Fixture.connect(device: "dev-3"))
        let frames = try [first, second, third].map { try Self.largeFrame(id: $0.allocateID()) }
        let held = 40 * 1024

        // 40 KiB each of three incomplete frames: the third takes the total past 100 KiB.
        await first.write(Array(frames[0].prefix(held)))
        await second.write(Array(frames[1].prefix(held)))
        try await waitFor { harness.server.transportStatistics.partialFrameBytes == 2 * held }
        await third.write(Array(frames[2].prefix(held)))
        #expect(await third.readsEOFWithoutBytes())
        let statistics = harness.server.transportStatistics
        #expect(statistics.partialFrameCapCloses == 1)
        #expect(statistics.partialFrameBytes == 2 * held)

        // The connections within the cap are untouched: their frames complete and are answered.
        await first.write(Array(frames[0].dropFirst(held)))
        #expect(await first.readFrame() != nil)
        await second.write(Array(frames[1].dropFirst(held)))
        #expect(await second.readFrame() != nil)
        try await waitFor { harness.server.transportStatistics.partialFrameBytes == 0 }
        await harness.stop()
    }

    /// Waits (``eventually(within:_:)``) until `condition` holds, failing the test when it does not.
    private func waitFor(_ condition: @Sendable () -> Bool) async throws {
        try #require(await eventually(condition), "condition not met")
    }
}
