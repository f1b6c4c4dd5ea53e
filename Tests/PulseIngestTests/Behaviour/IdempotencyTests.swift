import Foundation
import MsgTrans
import Testing

@testable import PulseIngest

/// Replays store nothing twice: by batchId, by (app, event id), by (app, app.crash.id).
@Suite struct IdempotencyTests {
    @Test func replayedBatchIsAcknowledgedAndStoredOnce() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let json = Fixture.eventBatch(batchId: "replay", eventIds: [Fixture.hexID(1), Fixture.hexID(2)])
        for _ in 0..<3 {
            let response = try #require(await client.request(biz: Biz.eventBatch, json: json, compression: .zstd))
            #expect(response.text == #"{"code":0,"msg":null,"data":true}"#)
        }
        let counts = try await harness.server.counts(app: Fixture.appId)
        #expect(counts.eventBatches == 1)
        #expect(counts.events == 2)
        #expect(harness.server.statistics().apps[Fixture.appId]?.duplicateBatches == 2)
        await harness.stop()
    }

    /// A batch and its replay in flight at the same time (one TCP write, possibly one commit) are
    /// still stored once.
    @Test func concurrentReplaysAreStoredOnce() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let json = Fixture.eventBatch(batchId: "twin", eventIds: (0..<10).map { Fixture.hexID(50 + $0) })
        var bytes: [UInt8] = []
        for _ in 0..<4 {
            bytes += try Frame.make(
                packetType: .request, bizType: Biz.eventBatch, messageID: client.allocateID(),
                plaintext: Array(json.utf8), preferred: .none
            ).encoded()
        }
        await client.write(bytes)
        for _ in 0..<4 {
            let frame = try #require(await client.readFrame())
            #expect(try #require(Response(frame: frame, expectedID: frame.messageID)).code == 0)
        }
        let counts = try await harness.server.counts(app: Fixture.appId)
        #expect(counts.eventBatches == 1)
        #expect(counts.events == 10)
        await harness.stop()
    }

    /// Events already stored under another batch id (an SDK that re-batched) are skipped.
    @Test func eventsAreUniquePerAppAcrossBatches() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let first = Fixture.eventBatch(batchId: "a", eventIds: [Fixture.hexID(1), Fixture.hexID(2)])
        let second = Fixture.eventBatch(batchId: "b", eventIds: [Fixture.hexID(2), Fixture.hexID(3)])
        #expect(try #require(await client.request(biz: Biz.eventBatch, json: first)).code == 0)
        #expect(try #require(await client.request(biz: Biz.eventBatch, json: second)).code == 0)
        let counts = try await harness.server.counts(app: Fixture.appId)
        #expect(counts.eventBatches == 2)
        #expect(counts.events == 3)
        #expect(harness.server.statistics().apps[Fixture.appId]?.duplicateEvents == 1)
        // The same event id under another app is another event.
        let (other, _) = try await harness.connectedClient(Fixture.connect(appId: "app_other"))
        let otherBatch = Fixture.eventBatch(
            batchId: "a", eventIds: [Fixture.hexID(1)], identity: Fixture.identity(appId: "app_other"))
        #expect(try #require(await other.request(biz: Biz.eventBatch, json: otherBatch)).code == 0)
        #expect(try await harness.server.counts(app: "app_other").events == 1)
        await harness.stop()
    }

    /// Two crash reports with the same app.crash.id are one crash, across batches; crash events
    /// carrying the same `app.crash.id` attribute are one event.
    @Test func crashesAreUniqueByCrashID() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        #expect(
            try #require(
                await client.request(
                    biz: Biz.crashBatch, json: Fixture.crashBatch(batchId: "c1", crashIds: ["k1", "k2"]))
            ).code == 0)
        #expect(
            try #require(
                await client.request(
                    biz: Biz.crashBatch, json: Fixture.crashBatch(batchId: "c2", crashIds: ["k2", "k3"]))
            ).code == 0)
        #expect(
            try #require(
                await client.request(
                    biz: Biz.crashBatch, json: Fixture.crashBatch(batchId: "c2", crashIds: ["k2", "k3"]))
            ).code == 0)
        let counts = try await harness.server.counts(app: Fixture.appId)
        #expect(counts.crashes == 3)
        #expect(counts.crashBatches == 2)

        let crashEvents = [
            Fixture.event(id: Fixture.hexID(70), kind: "Crash", attributes: #"{"app.crash.id":"kx"}"#),
            Fixture.event(id: Fixture.hexID(71), kind: "Crash", attributes: #"{"app.crash.id":"kx"}"#),
            Fixture.event(id: Fixture.hexID(72), kind: "Crash", attributes: #"{"app.crash.id":"ky"}"#),
        ].joined(separator: ",")
        let batch = #"{"identity":\#(Fixture.identity()),"events":[\#(crashEvents)],"batchId":"ce"}"#
        #expect(try #require(await client.request(biz: Biz.eventBatch, json: batch)).code == 0)
        #expect(try await harness.server.counts(app: Fixture.appId).events == 2)
        await harness.stop()
    }

    /// Deduplication survives a restart.
    @Test func replayAfterRestartStoresNothing() async throws {
        let harness = try await Harness.start()
        let json = Fixture.eventBatch(batchId: "persist", eventIds: [Fixture.hexID(1)])
        do {
            let (client, _) = try await harness.connectedClient()
            #expect(try #require(await client.request(biz: Biz.eventBatch, json: json)).code == 0)
        }
        await harness.server.shutdown()
        var configuration = IngestConfiguration(dataDirectory: harness.directory, policy: Fixture.policy)
        configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        let restarted = try await IngestServer.start(configuration)
        #expect(restarted.statistics().apps[Fixture.appId]?.events == 1)
        let client = await RawClient.connect(port: restarted.port)
        #expect(try #require(await client.request(biz: Biz.connect, json: Fixture.connect())).code == 0)
        #expect(try #require(await client.request(biz: Biz.eventBatch, json: json)).code == 0)
        #expect(try await restarted.counts(app: Fixture.appId).events == 1)
        #expect(restarted.statistics().apps[Fixture.appId]?.duplicateBatches == 1)
        await restarted.shutdown()
        try? FileManager.default.removeItem(atPath: harness.directory)
    }
}
