import Dispatch
import Foundation
import MsgTrans
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseIngest
@testable import PulseStorage

/// Batches in flight together share one group commit (one fsync): the pipelined requests of one
/// connection and those of other connections. `/stats` shows it (`groupCommits`,
/// `largestGroupCommit`).
@Suite struct SharedCommitTests {
    @Test func pipelinedBatchesOfOneAndOfSeveralConnectionsShareOneCommit() async throws {
        let harness = try await Harness.start(admin: true)
        let (first, _) = try await harness.connectedClient()
        let (second, _) = try await harness.connectedClient(Fixture.connect(device: "dev-2"))
        let executor = harness.server.core.store.executor
        // Hold the database thread so every batch below is queued before any commit starts.
        let gate = DispatchSemaphore(value: 0)
        let holding = HoldingFlag()
        let blocker = Task {
            try await executor.write { _ in
                holding.value.store(true, ordering: .relaxed)
                gate.wait()
            }
        }
        #expect(await eventually { holding.value.load(ordering: .relaxed) })
        let before = harness.server.statistics()

        var ids: [(RawClient, [UInt32])] = []
        for (connection, (client, device)) in [(first, "dev-1"), (second, "dev-2")].enumerated() {
            // Four requests in one write: pipelined on the connection.
            var burst: [UInt8] = []
            var sent: [UInt32] = []
            for batch in 0..<4 {
                let id = client.allocateID()
                let json = Fixture.eventBatch(
                    batchId: "\(device)-\(batch)",
                    eventIds: (0..<20).map { Fixture.hexID(connection * 10_000 + batch * 100 + $0) },
                    identity: Fixture.identity(device: device))
                burst += try Frame.make(
                    packetType: .request, bizType: Biz.eventBatch, messageID: id, plaintext: Array(json.utf8),
                    preferred: .zstd
                ).encoded()
                sent.append(id)
            }
            await client.write(burst)
            ids.append((client, sent))
        }
        #expect(await eventually { executor.pendingJobCount == 8 })
        gate.signal()
        try await blocker.value

        for (client, sent) in ids {
            var answered: Set<UInt32> = []
            for _ in sent {
                let frame = try #require(await client.readFrame())
                let response = try #require(Response(frame: frame, expectedID: frame.messageID))
                #expect(response.text == #"{"code":0,"msg":null,"data":true}"#)
                answered.insert(frame.messageID)
            }
            #expect(answered == Set(sent))
        }
        let after = harness.server.statistics()
        #expect(after.groupCommits - before.groupCommits == 1)
        #expect(after.committedJobs - before.committedJobs == 8)
        #expect(after.largestGroupCommit == 8)
        #expect(try await harness.server.counts(app: Fixture.appId).events == 160)

        let port = try #require(harness.server.adminPort)
        let stats = try #require(await HTTPProbe.send(port: port, path: "/stats")).object
        #expect((stats["largestGroupCommit"] as? NSNumber)?.intValue == 8)
        #expect((stats["groupCommits"] as? NSNumber)?.intValue == after.groupCommits)
        await harness.stop()
    }

    /// zstd batches reuse decompression contexts: 40 of them create at most a few.
    @Test func zstdBatchesReuseDecompressionContexts() async throws {
        let harness = try await Harness.start(admin: true)
        let (client, _) = try await harness.connectedClient()
        let before = harness.server.statistics()
        for batch in 0..<40 {
            let json = Fixture.eventBatch(
                batchId: "z\(batch)", eventIds: (0..<20).map { Fixture.hexID(batch * 100 + $0) })
            let response = try #require(await client.request(biz: Biz.eventBatch, json: json, compression: .zstd))
            #expect(response.code == 0)
        }
        let after = harness.server.statistics()
        // Other suites decompress at the same time; a context per payload would be 40 more.
        #expect(after.decompressionContextsCreated - before.decompressionContextsCreated < 10)
        #expect(after.decompressionContextsReused - before.decompressionContextsReused >= 30)
        let port = try #require(harness.server.adminPort)
        let stats = try #require(await HTTPProbe.send(port: port, path: "/stats")).object
        #expect((stats["decompressionContextsCreated"] as? NSNumber) != nil)
        #expect((stats["decompressionContextsReused"] as? NSNumber)?.intValue ?? 0 >= 30)
        await harness.stop()
    }
}

/// Set by a job once it runs on the database thread.
private final class HoldingFlag: Sendable {
    let value = Atomic<Bool>(false)
}
