import Foundation
import MsgTrans
import MsgTransRuntime
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseIngest

/// A second SQLite connection holding the database's write lock, as another process would.
final class WriteLock: @unchecked Sendable {
    private let connection: SQLiteConnection

    init(directory: String) throws {
        connection = try SQLiteConnection(path: directory + "/" + IngestStore.fileName)
        try connection.execute("BEGIN IMMEDIATE")
    }

    func release() throws {
        try connection.execute("ROLLBACK")
        try connection.close()
    }
}

/// Full queue → 429, failing storage → 503, never 500; graceful shutdown answers what is in flight.
@Suite struct BackPressureTests {
    /// With the store's write lock held by another connection, a connected client sends one event
    /// batch (event 1) that the ingest takes but cannot commit; returns once it is pending.
    static func blockOneBatch(
        in harness: Harness, batchId: String
    ) async throws -> (client: RawClient, lock: WriteLock, first: UInt32) {
        let (client, _) = try await harness.connectedClient()
        let lock = try WriteLock(directory: harness.directory)
        let first = await client.send(
            biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: batchId, eventIds: [Fixture.hexID(1)]))
        #expect(await eventually { harness.server.statistics().pendingBatches == 1 })
        return (client, lock, first)
    }

    /// The batch (event 2) sent while ``blockOneBatch(in:batchId:)``'s batch is pending.
    static func secondBatch(from client: RawClient) async throws -> Response {
        try #require(
            await client.request(
                biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "second", eventIds: [Fixture.hexID(2)])))
    }

    /// With the store blocked, the one queue slot is taken by the first batch; the next gets 429.
    /// Once the store is free the first batch is committed and acknowledged.
    @Test func fullIngestQueueAnswers429() async throws {
        let harness = try await Harness.start { configuration in
            configuration.maxPendingBatches = 1
            configuration.storageBusyTimeout = .seconds(60)
        }
        let (client, lock, first) = try await Self.blockOneBatch(in: harness, batchId: "first")
        let second = try await Self.secondBatch(from: client)
        #expect(second.code == 429)
        #expect(second.frame.bizType == Biz.eventBatch)
        try lock.release()
        let frame = try #require(await client.readFrame())
        #expect(frame.messageID == first)
        #expect(try #require(Response(frame: frame, expectedID: first)).code == 0)
        #expect(try await harness.server.events(app: Fixture.appId).map(\.eventId) == [Fixture.hexID(1)])
        #expect(harness.server.statistics().rejections[429] == 1)
        await harness.stop()
    }

    /// A peer exceeding its per-connection in-flight bound gets 429 envelopes from the transport.
    @Test func inFlightBoundAnswers429() async throws {
        let harness = try await Harness.start { configuration in
            configuration.transport.connection.maxConcurrentInboundRequests = 1
            configuration.storageBusyTimeout = .seconds(60)
        }
        let (client, lock, first) = try await Self.blockOneBatch(in: harness, batchId: "first")
        let second = try await Self.secondBatch(from: client)
        #expect(second.code == 429)
        try lock.release()
        let frame = try #require(await client.readFrame())
        #expect(frame.messageID == first)
        await harness.stop()
    }

    /// A database that stays locked past the busy timeout is unavailable storage: 503, not 500.
    @Test func lockedStorageAnswers503() async throws {
        let harness = try await Harness.start { configuration in
            configuration.storageBusyTimeout = .milliseconds(50)
        }
        let (client, connectionId) = try await harness.connectedClient()
        let lock = try WriteLock(directory: harness.directory)
        let batch = try #require(
            await client.request(
                biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "b", eventIds: [Fixture.hexID(1)])))
        #expect(batch.code == 503)
        let heartbeat = try #require(
            await client.request(
                biz: Biz.heartbeat, json: #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#)
        )
        #expect(heartbeat.code == 503)
        try lock.release()
        let retry = try #require(
            await client.request(
                biz: Biz.eventBatch, json: Fixture.eventBatch(batchId: "b", eventIds: [Fixture.hexID(1)])))
        #expect(retry.code == 0)
        #expect(harness.server.statistics().rejections[500] == nil)
        await harness.stop()
    }

    /// A closed database is unavailable storage: batches, crash batches, heartbeats and connects
    /// get 503 and the connection stays open.
    @Test func closedStorageAnswers503() async throws {
        let (harness, client, connectionId) = try await Harness.startConnected()
        await harness.server.core.store.close()
        let requests: [(UInt8, String)] = [
            (Biz.eventBatch, Fixture.eventBatch(batchId: "b", eventIds: [Fixture.hexID(1)])),
            (Biz.crashBatch, Fixture.crashBatch(batchId: "c", crashIds: ["k"])),
            (Biz.heartbeat, #"{"connectionId":"\#(connectionId)","clientTimeMs":1,"sdkVersion":"2.3.0"}"#),
        ]
        for (biz, json) in requests {
            let response = try #require(await client.request(biz: biz, json: json))
            #expect(response.code == 503, "biz \(biz)")
        }
        let second = await RawClient.connect(port: harness.server.port)
        #expect(try #require(await second.request(biz: Biz.connect, json: Fixture.connect(device: "d2"))).code == 503)
        let ping = try #require(await client.request(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#))
        #expect(ping.code == 0)
        await harness.stop()
    }

    /// Graceful shutdown: a batch waiting for its commit is still acknowledged, a request arriving
    /// while draining gets 429, then the connection is closed.
    @Test func shutdownAnswersInFlightBatchesThenCloses() async throws {
        let harness = try await Harness.start { configuration in
            configuration.storageBusyTimeout = .seconds(60)
        }
        let (client, lock, first) = try await Self.blockOneBatch(in: harness, batchId: "inflight")
        let server = harness.server
        let shutdown = Task { await server.shutdown() }
        let port = harness.server.port
        #expect(await eventually { await !RawClient.canConnect(port: port) })
        let late = await client.send(biz: Biz.control, json: #"{"route":"telemetry.ping","args":{}}"#)
        let refused = try #require(await client.readFrame())
        #expect(refused.messageID == late)
        #expect(try #require(Response(frame: refused, expectedID: late)).code == 429)
        try lock.release()
        let answer = try #require(await client.readFrame())
        #expect(answer.messageID == first)
        #expect(try #require(Response(frame: answer, expectedID: first)).code == 0)
        #expect(await client.readsEOFWithoutBytes())
        await shutdown.value
        try? FileManager.default.removeItem(atPath: harness.directory)
    }
}
