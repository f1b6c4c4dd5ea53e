import Foundation
import PulseTestSupport
import Testing

@testable import PulseIngest

@Suite struct HeartbeatPresenceTests {
    func heartbeat(_ connectionId: String) -> String {
        #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#
    }

    /// Presence is a 150 s TTL refreshed by connect and each heartbeat, judged by the injected clock.
    @Test func presenceExpiresAfter150SecondsWithoutHeartbeat() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        #expect(harness.server.isPresent(connectionId: connectionId))
        harness.clock.advance(milliseconds: 149_999)
        #expect(harness.server.isPresent(connectionId: connectionId))
        #expect(harness.server.statistics().apps[Fixture.appId]?.present == 1)
        harness.clock.advance(milliseconds: 1)
        #expect(!harness.server.isPresent(connectionId: connectionId))
        #expect(harness.server.statistics().apps[Fixture.appId]?.present == 0)
        #expect(harness.server.statistics().apps[Fixture.appId]?.sessions == 1)

        let response = try #require(await client.request(biz: Biz.heartbeat, json: heartbeat(connectionId)))
        #expect(response.code == 0)
        #expect((response.dataObject["serverTimeMs"] as? NSNumber)?.int64Value == harness.clock.milliseconds)
        #expect(harness.server.isPresent(connectionId: connectionId))
        harness.clock.advance(milliseconds: 100_000)
        #expect(harness.server.isPresent(connectionId: connectionId))
        await harness.stop()
    }

    /// Every accepted heartbeat updates the durable connection history; the close is recorded too.
    @Test func heartbeatsAndCloseAreRecordedInTheHistory() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let connectedAt = harness.clock.milliseconds
        for _ in 0..<3 {
            harness.clock.advance(milliseconds: 60_000)
            let response = try #require(await client.request(biz: Biz.heartbeat, json: heartbeat(connectionId)))
            #expect(response.code == 0)
        }
        let history = try await harness.server.connectionHistory(app: Fixture.appId)
        #expect(history.count == 1)
        #expect(history.first?.connectedAtMs == connectedAt)
        #expect(history.first?.heartbeatCount == 3)
        #expect(history.first?.lastHeartbeatAtMs == harness.clock.milliseconds)

        client.hangUp()
        let server = harness.server
        #expect(
            try await eventually { try await server.connectionHistory(app: Fixture.appId).first?.closedAtMs != nil })
        #expect(!harness.server.isPresent(connectionId: connectionId))
        #expect(harness.server.statistics().apps[Fixture.appId]?.sessions == 0)
        await harness.stop()
    }

    /// The history survives a restart; connections left open by a previous process are closed.
    @Test func historySurvivesARestart() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        _ = try #require(await client.request(biz: Biz.heartbeat, json: heartbeat(connectionId)))
        await harness.server.shutdown()

        var configuration = IngestConfiguration(dataDirectory: harness.directory, policy: Fixture.policy)
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        configuration.clock = harness.clock.clock
        let restarted = try await IngestServer.start(configuration)
        let history = try await restarted.connectionHistory(app: Fixture.appId)
        #expect(history.map(\.connectionId) == [connectionId])
        #expect(history.first?.heartbeatCount == 1)
        #expect(history.first?.closedAtMs != nil)
        await restarted.shutdown()
        try? FileManager.default.removeItem(atPath: harness.directory)
    }
}
