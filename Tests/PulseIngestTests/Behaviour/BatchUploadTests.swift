import Foundation
import MsgTrans
import Testing

@testable import PulseIngest

@Suite struct BatchUploadTests {
    /// A 64-event zstd batch is decoded, stored with its indexed columns and canonical JSON, and
    /// acknowledged with the exact contract bytes.
    @Test func zstdEventBatchIsStored() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        let ids = (0..<64).map { Fixture.hexID(1_000 + $0) }
        let json = Fixture.eventBatch(batchId: "batch-64", eventIds: ids)
        let id = await client.send(biz: Biz.eventBatch, json: json, compression: .zstd)
        let frame = try #require(await client.readFrame())
        let response = try #require(Response(frame: frame, expectedID: id))
        #expect(response.echoesRequest)
        #expect(response.text == #"{"code":0,"msg":null,"data":true}"#)
        let stored = try await harness.server.events(app: Fixture.appId, limit: 100)
        #expect(Set(stored.map(\.eventId)) == Set(ids))
        let first = try #require(stored.first { $0.eventId == ids[0] })
        #expect(first.batchId == "batch-64")
        #expect(first.installationId == "inst-1")
        #expect(first.deviceId == "dev-1")
        #expect(first.sessionId == "sess-1")
        #expect(first.kind == "Analytics")
        #expect(first.name == "checkout")
        #expect(first.timestampMs == 1_764_399_990_001)
        #expect(first.receivedAtMs == harness.clock.milliseconds)
        #expect(first.json == Fixture.event(id: ids[0]))
        let stats = try #require(harness.server.statistics().apps[Fixture.appId])
        #expect(stats.eventBatches == 1)
        #expect(stats.events == 64)
        _ = connectionId
        await harness.stop()
    }

    /// zlib works as well as zstd and none.
    @Test func zlibEventBatchIsStored() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let response = try #require(
            await client.request(
                biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "z", eventIds: [Fixture.hexID(1)]),
                compression: .zlib))
        #expect(response.code == 0)
        #expect(try await harness.server.counts(app: Fixture.appId).events == 1)
        await harness.stop()
    }

    /// Invalid batches are 400 and store nothing: bad JSON, an unknown kind, no events, a corrupt
    /// zstd stream (the connection stays open).
    @Test func invalidBatchesAre400() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let unknownKind = Fixture.eventBatch(batchId: "k", eventIds: [Fixture.hexID(1)])
            .replacingOccurrences(of: "\"Analytics\"", with: "\"analytics\"")
        for json in [
            "{", unknownKind, #"{"identity":\#(Fixture.identity()),"events":[],"batchId":"e"}"#,
            #"{"identity":\#(Fixture.identity()),"events":[\#(Fixture.event(id: "x"))]}"#,
        ] {
            let response = try #require(await client.request(biz: Biz.eventBatch, json: json))
            #expect(response.code == 400, "\(response.text)")
        }
        let corrupt = Frame(
            compression: .zstd, packetType: .request, bizType: Biz.eventBatch, messageID: 900,
            payload: [0x28, 0xB5, 0x2F, 0xFD, 1, 2, 3])
        await client.write(corrupt.encoded())
        let answer = try #require(await client.readFrame())
        #expect(answer.messageID == 900)
        #expect(try #require(Response(frame: answer, expectedID: 900)).code == 400)
        #expect(try await harness.server.counts(app: Fixture.appId).events == 0)
        let crash = try #require(await client.request(biz: Biz.crashBatch, json: #"{"identity":{}}"#))
        #expect(crash.code == 400)
        await harness.stop()
    }

    /// Crash batches are stored per crash report.
    @Test func crashBatchIsStored() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let response = try #require(
            await client.request(
                biz: Biz.crashBatch, json: Fixture.crashBatch(batchId: "cb", crashIds: ["crash-a", "crash-b"]),
                compression: .zstd))
        #expect(response.text == #"{"code":0,"msg":null,"data":true}"#)
        let crashes = try await harness.server.crashes(app: Fixture.appId)
        #expect(Set(crashes.map(\.crashId)) == ["crash-a", "crash-b"])
        #expect(crashes.first?.sessionId == "sess-1")
        #expect(crashes.allSatisfy { $0.batchId == "cb" && $0.timestampMs == 1_764_399_990_001 })
        let counts = try await harness.server.counts(app: Fixture.appId)
        #expect(counts.crashBatches == 1)
        #expect(counts.crashes == 2)
        await harness.stop()
    }
}
