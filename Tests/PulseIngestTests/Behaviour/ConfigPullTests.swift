import Foundation
import PulseProtocol
import Testing

@testable import PulseIngest

@Suite struct ConfigPullTests {
    /// A pull returns the complete snapshot with its revision, also when the client is current.
    @Test func pullReturnsTheCompleteSnapshot() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        for revision in [0, 3, 7] {
            let response = try #require(
                await client.request(
                    biz: Biz.configPull, json: #"{"configRevision":\#(revision),"capabilities":["batch_upload"]}"#))
            #expect(response.code == 0)
            let data = response.dataObject
            #expect((data["revision"] as? NSNumber)?.intValue == 7)
            #expect((data["batchMaxEvents"] as? NSNumber)?.intValue == 32)
            #expect(data["compression"] as? String == "zstd")
            #expect(data["killSwitch"] as? Bool == false)
            #expect(data["requiredCapabilities"] as? [String] == ["batch_upload"])
        }
        await harness.stop()
    }

    /// 409 when the client claims a revision newer than the server's; 403 without a required
    /// capability; malformed is 400.
    @Test func conflictAndCapabilityRules() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let newer = try #require(
            await client.request(biz: Biz.configPull, json: #"{"configRevision":8,"capabilities":["batch_upload"]}"#))
        #expect(newer.code == 409)
        #expect(newer.data is NSNull)
        let lacking = try #require(await client.request(biz: Biz.configPull, json: #"{"configRevision":0}"#))
        #expect(lacking.code == 403)
        let malformed = try #require(await client.request(biz: Biz.configPull, json: #"{"configRevision":"x"}"#))
        #expect(malformed.code == 400)
        await harness.stop()
    }

    /// A reload that changes a snapshot without raising its revision bumps it; heartbeats report it.
    @Test func reloadBumpsTheRevisionAndHeartbeatsReportIt() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        var policy = Fixture.policy
        policy.apps[Fixture.appId]?.policy.batchMaxEvents = 16
        let changed = harness.server.reload(policy)
        #expect(changed == [Fixture.appId])
        #expect(harness.server.policy.apps[Fixture.appId]?.policy.revision == 8)
        #expect(harness.server.reload(policy).isEmpty)
        let heartbeat = try #require(
            await client.request(
                biz: Biz.heartbeat, json: #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#)
        )
        #expect((heartbeat.dataObject["configRevision"] as? NSNumber)?.intValue == 8)
        let pull = try #require(
            await client.request(biz: Biz.configPull, json: #"{"configRevision":7,"capabilities":["batch_upload"]}"#))
        #expect((pull.dataObject["batchMaxEvents"] as? NSNumber)?.intValue == 16)
        await harness.stop()
    }
}
