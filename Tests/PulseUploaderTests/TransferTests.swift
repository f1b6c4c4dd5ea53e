import Foundation
import PulseGateway
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseUploader

/// Claim / export / settle with a real out-of-process transfer: `curl`, started detached by
/// ``CurlProcessTransfer``, against the fault server and the real gateway on loopback. Lease expiry runs on
/// the injected clock; only the real curl processes are waited for.
@Suite(.serialized) struct TransferTests {
    /// A fixture whose clock starts at the real time (curl's requests are answered in real time; leases and
    /// backoff follow the manual clock from there).
    func fixture(endpoint: String) throws -> UploaderFixture {
        var fixture = try UploaderFixture(clock: ManualClock(UploaderClock.system.nowMilliseconds()))
        fixture.endpoint = endpoint
        return fixture
    }

    func transfer(_ fixture: UploaderFixture) -> CurlProcessTransfer {
        CurlProcessTransfer(exportDirectory: fixture.directory.path + "/transfers")
    }

    /// Waits (``eventually(within:_:)``) until every exported folder has a result file.
    func waitForResults(_ exported: [ExportedTransfer], seconds: Double = 30) async -> Bool {
        await eventually(within: .seconds(seconds)) {
            exported.allSatisfy {
                FileManager.default.fileExists(atPath: $0.directory + "/" + CurlProcessTransfer.resultFileName)
            }
        }
    }

    /// Records one event, seals it and hands it to curl; returns the stored batch and the exported transfer.
    func handOne(_ uploader: Uploader, _ transfer: CurlProcessTransfer) async throws -> (
        Uploader.StoredBatch, ExportedTransfer
    ) {
        try await uploader.record(.event(EventEntry(name: "transferred")))
        try await uploader.seal(.flush)
        let stored = try #require(try await uploader.storedBatches().first)
        let batches = try await uploader.claimForTransfer()
        #expect(batches.count == 1)
        let exported = try #require(batches.first).export(into: transfer.exportDirectory)
        try await transfer.start([exported])
        return (stored, exported)
    }

    @Test func aClaimedBatchExportsItsStoredBytesAndHeadersWithoutSentAtAndIsLeased() async throws {
        let server = try FaultServer()
        let fixture = try fixture(endpoint: server.baseURL)
        let uploader = try await fixture.open()
        for index in 0..<20 {
            try await uploader.record(.event(EventEntry(name: "e", attributes: ["n": .int(Int64(index))])))
        }
        try await uploader.record(.crash(CrashReport(crashId: "c-1", message: "SIGSEGV")))
        try await uploader.seal(.flush)
        let all = try await uploader.storedBatches()
        #expect(all.count == 2)
        let stored = all.filter { $0.recordClass != .crash }

        // The background route alone: the crash batch.
        let crash = try await uploader.claimForTransfer(route: .backgroundRoute)
        #expect(crash.map(\.lease.batchId) == all.filter { $0.recordClass == .crash }.map(\.batchId))
        #expect(crash.map(\.recordClass) == [.crash])
        let rest = try await uploader.claimForTransfer()
        #expect(rest.map(\.lease.batchId) == stored.map(\.batchId))
        // Both are leased now: no other claim and no foreground send touches them.
        #expect(try await uploader.claimForTransfer().isEmpty)
        #expect(try await uploader.flush().attempted == 0)
        #expect(server.requests.isEmpty)
        #expect(try await uploader.status().batchesWithTransfers == 2)

        let batch = try #require(rest.first)
        #expect(batch.lease.attempt == 1)
        #expect(batch.requestLine == "POST /v1/logs HTTP/1.1")
        #expect(batch.request.url == server.baseURL + "/v1/logs")
        #expect(batch.request.header("Apsio-Sent-At") == nil)
        #expect(batch.request.header("Apsio-Batch-Id") == batch.lease.batchId)
        #expect(batch.request.header("Apsio-App-Id") == "test-app")
        #expect(batch.request.header("Content-Encoding") == "gzip")
        #expect(batch.request.header("Apsio-Batch-Sequence") == "\(stored[0].sequence ?? 0)")
        #expect(batch.leaseExpiresAtMilliseconds == fixture.clock.milliseconds + UploadPolicy().leaseMilliseconds)
        let exported = try batch.export(into: fixture.directory.path + "/out")
        #expect(exported.directory.hasSuffix("/" + batch.lease.token))
        let body = try Data(contentsOf: URL(fileURLWithPath: exported.bodyPath))
        #expect(sha256Hex(Array(body)) == sha256Hex(stored[0].body))
        let headers = try String(contentsOfFile: exported.headersPath, encoding: .utf8)
        #expect(
            headers.split(separator: "\n").map(String.init) == batch.request.headers.map { "\($0.name): \($0.value)" })
        #expect(!headers.lowercased().contains("apsio-sent-at"))
        #expect(BatchLease(token: batch.lease.token) == batch.lease)
        #expect(BatchLease(token: "not-a-lease") == nil)
        try await uploader.close()
        server.stop()
    }

    @Test func curlSendsTheExportedBatchWithoutSentAtAndTheSettleDeletesIt() async throws {
        let server = try FaultServer()
        let fixture = try fixture(endpoint: server.baseURL)
        let uploader = try await fixture.open()
        let transfer = transfer(fixture)
        let (stored, exported) = try await handOne(uploader, transfer)
        #expect(await waitForResults([exported]))
        let request = try #require(server.requests.first)
        #expect(request.path == "/v1/logs")
        #expect(request.headers["apsio-sent-at"] == nil)
        #expect(request.headers["apsio-batch-id"] == stored.batchId)
        #expect(request.headers["content-encoding"] == "gzip")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["expect"] == nil)
        #expect(sha256Hex(request.body) == sha256Hex(stored.body))

        let settled = try await transfer.settleFinished(on: uploader)
        #expect(settled == [TransferSettlement(lease: exported.lease, effect: .applied, verdict: .delivered)])
        #expect(!FileManager.default.fileExists(atPath: exported.directory))
        #expect(try await uploader.storedBatches().isEmpty)
        let diagnostics = try await uploader.status().diagnostics
        #expect(diagnostics.batchesAttempted == 1)
        #expect(diagnostics.batchesSentSuccessfully == 1)
        // Settling the same result again finds nothing to change and counts nothing.
        #expect(try await uploader.settle(exported.lease, .response(UploadResponse(status: 200))).effect == .gone)
        #expect(try await uploader.status().diagnostics.batchesSentSuccessfully == 1)
        try await uploader.close()
        server.stop()
    }

    /// One case of the response table, driven through curl.
    struct TableCase: Sendable, CustomStringConvertible {
        var name: String
        var behavior: FaultServer.Behavior?
        var verdict: TransferSettlement.Verdict
        var description: String { name }
    }

    static let table: [TableCase] = [
        TableCase(name: "200", behavior: .ok, verdict: .delivered),
        TableCase(
            name: "200 duplicate", behavior: .respond(status: 200, headers: ["Apsio-Duplicate": "true"]),
            verdict: .duplicate),
        TableCase(name: "413", behavior: .respond(status: 413), verdict: .rejected),
        TableCase(
            name: "429 Retry-After", behavior: .respond(status: 429, headers: ["Retry-After": "30"]),
            verdict: .throttled),
        TableCase(name: "503", behavior: .respond(status: 503), verdict: .retryLater),
        TableCase(name: "connection refused", behavior: nil, verdict: .retryLater),
    ]

    @Test(arguments: table) func eachOutcomeOfTheResponseTableIsAppliedAsForAForegroundSend(_ row: TableCase)
        async throws
    {
        let server = try FaultServer(script: row.behavior.map { [$0] } ?? [])
        let endpoint = server.baseURL
        if row.behavior == nil { server.stop() }  // nothing listens: connection refused
        let fixture = try fixture(endpoint: endpoint)
        let uploader = try await fixture.open()
        let transfer = transfer(fixture)
        let (stored, exported) = try await handOne(uploader, transfer)
        #expect(await waitForResults([exported]))
        let now = fixture.clock.milliseconds
        let settled = try await transfer.settleFinished(on: uploader)
        #expect(settled.map(\.verdict) == [row.verdict])
        #expect(settled.map(\.effect) == [.applied])
        let status = try await uploader.status()
        let remaining = try await uploader.storedBatches()
        switch row.verdict {
        case .delivered, .duplicate:
            #expect(remaining.isEmpty)
            #expect(status.diagnostics.batchesSentSuccessfully == 1)
        case .rejected:
            #expect(remaining.isEmpty)
            #expect(
                status.drops[.rejected]
                    == UploaderStatus.DropCount(records: 1, batches: 1, bytes: Int64(stored.body.count)))
            #expect(status.diagnostics.batchesWithErrors == 1)
        case .throttled:
            #expect(remaining.map(\.batchId) == [stored.batchId])
            let hold = try #require(status.retryAfterHoldUntilMilliseconds)
            #expect(hold >= now + 30_000 && hold <= now + 33_000)
            #expect(try await uploader.claimForTransfer().isEmpty)
        case .retryLater:
            // No answer or a 503 without Retry-After is the endpoint's failure: the endpoint backs off.
            #expect(remaining.map(\.batchId) == [stored.batchId])
            #expect(status.endpointFailures == 1)
            #expect(status.endpointBackoffUntilMilliseconds != nil)
            #expect(status.recentErrors.first?.batchId == stored.batchId)
            if row.behavior == nil {
                #expect(status.recentErrors.first?.message.contains("connection refused") == true)
            }
            #expect(try await uploader.claimForTransfer().isEmpty)
        default:
            Issue.record("unexpected verdict \(row.verdict)")
        }
        // After the hold or backoff the batch goes again: same id, same bytes, the next attempt.
        if !remaining.isEmpty {
            fixture.clock.stepWallClock(by: 400_000)
            let again = try #require(try await uploader.claimForTransfer().first)
            #expect(again.lease == BatchLease(batchId: stored.batchId, attempt: 2))
            #expect(sha256Hex(again.request.body) == sha256Hex(stored.body))
        }
        try await uploader.close()
        server.stop()
    }

    @Test func aResultThatNeverAppearsLetsTheLeaseLapseAndTheBatchIsSentAgainWithTheSameIdAndBytes() async throws {
        let server = try FaultServer()
        let fixture = try fixture(endpoint: server.baseURL)
        let uploader = try await fixture.open()
        let transfer = transfer(fixture)
        try await uploader.record(.event(EventEntry(name: "lost")))
        try await uploader.seal(.flush)
        let stored = try #require(try await uploader.storedBatches().first)
        // The transfer is lost: exported, never started (the OS dropped the task).
        let lost = try #require(try await uploader.claimForTransfer().first).export(into: transfer.exportDirectory)

        // Within the lease nothing touches the batch, and the folder is left for its result.
        fixture.clock.stepWallClock(by: UploadPolicy().leaseMilliseconds - 1)
        #expect(try await transfer.settleFinished(on: uploader).isEmpty)
        #expect(FileManager.default.fileExists(atPath: lost.directory))
        #expect(try await uploader.claimForTransfer().isEmpty)
        #expect(try await uploader.sendDue().attempted == 0)

        // The lease lapsed (plus the grace for curl's exit): the folder is given up, the batch is claimable.
        fixture.clock.stepWallClock(by: CurlProcessTransfer.abandonGraceMilliseconds + 2)
        #expect(try await transfer.settleFinished(on: uploader).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: lost.directory))
        let again = try #require(try await uploader.claimForTransfer().first)
        #expect(again.lease == BatchLease(batchId: stored.batchId, attempt: 2))
        let exported = try again.export(into: transfer.exportDirectory)
        try await transfer.start([exported])
        #expect(await waitForResults([exported]))
        #expect(server.requests.count == 1)
        #expect(server.requests.first?.headers["apsio-batch-id"] == stored.batchId)
        #expect(server.requests.map { sha256Hex($0.body) } == [sha256Hex(stored.body)])
        #expect(try await transfer.settleFinished(on: uploader).map(\.effect) == [.applied])
        #expect(try await uploader.storedBatches().isEmpty)

        // The lost transfer's result turns up after all: nothing is left to change or count.
        #expect(try await uploader.settle(lost.lease, .response(UploadResponse(status: 200))).effect == .gone)
        #expect(try await uploader.status().batchesWithTransfers == 0)
        let diagnostics = try await uploader.status().diagnostics
        #expect(diagnostics.batchesAttempted == 2)
        #expect(diagnostics.batchesSentSuccessfully == 1)
        #expect(diagnostics.batchesWithErrors == 0)
        try await uploader.close()
        server.stop()
    }

    @Test func aStaleResultAfterTheBatchWasClaimedAgainLosesNothingAndCountsNothingTwice() async throws {
        let fixture = try fixture(endpoint: "http://127.0.0.1:9")
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "stale")))
        try await uploader.seal(.flush)
        let first = try #require(try await uploader.claimForTransfer().first).lease
        fixture.clock.stepWallClock(by: UploadPolicy().leaseMilliseconds + 1)
        let second = try #require(try await uploader.claimForTransfer().first).lease
        #expect(second == BatchLease(batchId: first.batchId, attempt: 2))

        // The first transfer's 503 arrives late: the newer claim decides, nothing changes or is counted.
        let late = try await uploader.settle(first, .response(UploadResponse(status: 503)))
        #expect(late == TransferSettlement(lease: first, effect: .superseded, verdict: .retryLater))
        var status = try await uploader.status()
        #expect(status.endpointFailures == 0)
        #expect(status.diagnostics.batchesWithErrors == 0)
        #expect(try await uploader.storedBatches().count == 1)
        #expect(try await uploader.claimForTransfer().isEmpty)  // still the second claim's

        // The first transfer did deliver after all (a 2xx always applies: the gateway has the batch)…
        #expect(try await uploader.settle(first, .response(UploadResponse(status: 200))).effect == .applied)
        #expect(try await uploader.storedBatches().isEmpty)
        // …and the second one, answered as a duplicate, finds nothing more to do.
        let duplicate = try await uploader.settle(
            second, .response(UploadResponse(status: 200, headers: ["Apsio-Duplicate": "true"])))
        #expect(duplicate == TransferSettlement(lease: second, effect: .gone, verdict: .duplicate))
        status = try await uploader.status()
        #expect(status.diagnostics.batchesSentSuccessfully == 1)
        #expect(status.diagnostics.batchesWithErrors == 0)

        // Settling one failure twice counts it once.
        try await uploader.record(.event(EventEntry(name: "twice")))
        try await uploader.seal(.flush)
        let third = try #require(try await uploader.claimForTransfer().first).lease
        #expect(try await uploader.settle(third, .failed(message: "connection refused")).effect == .applied)
        #expect(try await uploader.settle(third, .failed(message: "connection refused")).effect == .superseded)
        status = try await uploader.status()
        #expect(status.diagnostics.batchesWithErrors == 1)
        #expect(status.endpointFailures == 1)
        #expect(try await uploader.storedBatches().map(\.attempts) == [1])

        // A transfer that cannot start gives its batch back at once.
        fixture.clock.stepWallClock(by: 600_000)
        let released = try #require(try await uploader.claimForTransfer().first).lease
        try await uploader.releaseTransfer(released)
        #expect(try await uploader.claimForTransfer().first?.lease.attempt == released.attempt + 1)
        try await uploader.close()
    }

    @Test func curlTransfersToTheRealGatewayArriveWithoutSentAtAndAreAccepted() async throws {
        let directory = try TemporaryDirectory()
        let gateway = try await GatewayApp.start(
            GatewayConfiguration(
                dataDirectory: directory.path + "/gateway", listenPort: 0, shutdownGracePeriod: .seconds(2)))
        // A relay in front of the gateway reads what curl put on the wire.
        let relay = try DelayingRelay(upstreamPort: gateway.httpPort, delay: .zero)
        let fixture = try fixture(endpoint: "http://127.0.0.1:\(relay.port)")
        let uploader = try await fixture.open()
        try await uploader.record(.event(EventEntry(name: "checkout")))
        try await uploader.record(.crash(CrashReport(crashId: "crash-os", message: "SIGABRT", stack: "#0 abort")))
        try await uploader.record(.span(SpanEntry(name: "GET /", kind: .client)))
        try await uploader.seal(.flush)
        let stored = try await uploader.storedBatches()
        let transfer = transfer(fixture)
        let exported = try await uploader.claimForTransfer().map { try $0.export(into: transfer.exportDirectory) }
        #expect(exported.count == 3)
        try await transfer.start(exported)
        #expect(await waitForResults(exported))
        let settled = try await transfer.settleFinished(on: uploader)
        #expect(settled.count == 3)
        #expect(settled.allSatisfy { $0.effect == .applied && $0.verdict == .delivered }, "\(settled)")
        #expect(try await uploader.storedBatches().isEmpty)
        #expect(try await uploader.status().diagnostics.batchesSentSuccessfully == 3)

        let wire = relay.sent.map { String(decoding: $0, as: UTF8.self).lowercased() }
        #expect(wire.count == 3)
        #expect(wire.allSatisfy { !$0.contains("apsio-sent-at") && $0.contains("apsio-batch-id: ") })
        // The gateway stored each batch id with no send time (it falls back to its receive time).
        let database = try SQLiteConnection(path: directory.path + "/gateway/" + GatewayStore.fileName)
        let rows = try database.query("SELECT batch_id, sent_at FROM dedup") { row in
            (try row.column(0, as: String.self), try row.column(1, as: Int64?.self))
        }
        #expect(Set(rows.map(\.0)) == Set(stored.map(\.batchId)))
        #expect(rows.allSatisfy { $0.1 == nil })
        try await uploader.close()
        relay.stop()
        await gateway.shutdown()
    }

    /// Prints the cost of the transfer path per batch (no timing assertions): claim + export, curl
    /// processes started detached against the fault server, and the settle pass that reads their results.
    @Test func transferPathThroughput() async throws {
        let batches = 40
        let server = try FaultServer()
        var fixture = try fixture(endpoint: server.baseURL)
        fixture.policy.maximumBatchRecords = 1
        let uploader = try await fixture.open()
        for index in 0..<batches {
            try await uploader.record(.event(EventEntry(name: "b", attributes: ["n": .int(Int64(index))])))
        }
        try await uploader.seal(.flush)
        let transfer = transfer(fixture)
        let claimStart = Date()
        let exported = try await uploader.claimForTransfer(maximum: batches).map {
            try $0.export(into: transfer.exportDirectory)
        }
        let claimSeconds = Date().timeIntervalSince(claimStart)
        #expect(exported.count == batches)
        let sendStart = Date()
        try await transfer.start(exported)
        #expect(await waitForResults(exported, seconds: 120))
        let sendSeconds = Date().timeIntervalSince(sendStart)
        let settleStart = Date()
        let settled = try await transfer.settleFinished(on: uploader)
        let settleSeconds = Date().timeIntervalSince(settleStart)
        #expect(settled.count == batches)
        #expect(settled.allSatisfy { $0.effect == .applied && $0.verdict == .delivered })
        #expect(try await uploader.storedBatches().isEmpty)
        print(
            "transfer path, \(batches) batches: claim + export \(Int(claimSeconds * 1_000)) ms,"
                + " \(batches) detached curl transfers to results \(Int(sendSeconds * 1_000)) ms,"
                + " settle \(Int(settleSeconds * 1_000)) ms (\(Int(settleSeconds * 1_000_000) / batches) µs per result)"
        )
        try await uploader.close()
        server.stop()
    }
}
