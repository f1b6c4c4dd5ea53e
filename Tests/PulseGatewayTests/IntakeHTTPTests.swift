import MsgTrans
import PulseHashing
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The intake over real HTTP: every status code it can produce.
@Suite struct IntakeHTTPTests {
    static let body = OTLP.logs(records: [
        OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-1")])
    ])

    /// Rows in a table, read through a separate connection (what is on disk, not in memory).
    static func count(_ table: String, in directory: TemporaryDirectory) throws -> Int {
        let connection = try SQLiteConnection(path: directory.path + "/" + GatewayStore.fileName)
        return try connection.queryFirst("SELECT count(*) FROM \(table)") { try $0.column(0, as: Int.self) } ?? -1
    }

    @Test func acceptedBatchIsDurableBeforeTheAnswer() async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        let response = try await harness.post(Self.body, batchID: "batch-1")
        #expect(response.status == 200)
        #expect(response.bodyText == "{}")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.header("Apsio-Duplicate") == nil)
        // No forwarder runs in this harness: the rows are there because the commit was durable.
        #expect(try Self.count("outbox", in: harness.directory) == 1)
        #expect(try Self.count("dedup", in: harness.directory) == 1)
        #expect(harness.gateway.outboxBatches == 1)
        await harness.stop(removing: false)
        #expect(try Self.count("outbox", in: harness.directory) == 1)
    }

    @Test func duplicatesAreAnsweredTwoHundredAndStoredOnce() async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        #expect(try await harness.post(Self.body, batchID: "b-7").status == 200)
        let again = try await harness.post(Self.body, batchID: "b-7")
        #expect(again.status == 200)
        #expect(again.header("Apsio-Duplicate") == "true")
        #expect(again.header(GatewayIntake.conflictHeader) == nil)
        // The same batch id under another app is another batch.
        #expect(try await harness.post(Self.body, batchID: "b-7", app: "news").header("Apsio-Duplicate") == nil)
        #expect(try Self.count("outbox", in: harness.directory) == 2)
        #expect(harness.gateway.metrics.duplicateCount == 1)
        #expect(harness.gateway.metrics.conflictCount == 0)
        await harness.stop(removing: false)
    }

    /// (Pulse batch id, event ids) of every outbox row, in FIFO order, read from disk.
    static func outboxBatches(in directory: TemporaryDirectory) throws -> [(String, [String])] {
        let connection = try SQLiteConnection(path: directory.path + "/" + GatewayStore.fileName)
        return try connection.query(
            "SELECT pulse_batch_id, payload, compression, payload_bytes FROM outbox ORDER BY seq"
        ) { row in
            let stored = StoredPayload(
                bytes: try row.column(1), compression: try row.column(2), plainCount: try row.column(3))
            let text = String(decoding: try stored.plaintext(), as: UTF8.self)
            let ids = text.split(separator: #""id":""#).dropFirst().map { String($0.prefix { $0 != "\"" }) }
            return (try row.column(0, as: String.self), ids)
        }
    }

    @Test func aBatchIDReusedWithAnotherBodyIsStoredAsItsOwnBatch() async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        // Records without log.record.uid: their event ids are derived from the batch id and position.
        func body(_ seconds: Int) -> String { OTLP.logs(records: [OTLP.record(seconds)]) }
        func conflicts(_ seconds: Int, app: String = "shop") async throws -> Bool {
            try await harness.post(body(seconds), batchID: "static", app: app).header(GatewayIntake.conflictHeader)
                == "true"
        }
        let first = try await harness.post(body(1_700_000_000), batchID: "static")
        #expect(first.header(GatewayIntake.conflictHeader) == nil)

        let conflict = try await harness.post(body(1_700_000_009), batchID: "static")
        #expect(conflict.status == 200)
        #expect(conflict.bodyText == "{}")
        #expect(conflict.header(GatewayIntake.conflictHeader) == "true")
        #expect(conflict.header("Apsio-Duplicate") == nil)
        // Durable before the answer: its own dedup row and outbox row.
        #expect(try Self.count("dedup", in: harness.directory) == 2)
        let batches = try Self.outboxBatches(in: harness.directory)
        #expect(batches.count == 2)
        // Its Pulse batch id and derived event id include the body hash, so the upstream keeps both.
        #expect(batches[0].0 != batches[1].0)
        #expect(batches[0].1.count == 1 && batches[1].1.count == 1)
        #expect(batches[0].1 != batches[1].1)
        var context = MappingContext(
            appID: "shop", batchID: "static", receivedAt: 0, sentAt: nil, fallbacks: IdentityFallbacks())
        #expect(batches[0].0 == PulseBatchID.make(context, resourceIndex: 0, chunk: 0, crash: false))
        context.conflictHash = SHA256.hexDigest(Array(body(1_700_000_009).utf8))
        #expect(batches[1].0 == PulseBatchID.make(context, resourceIndex: 0, chunk: 0, crash: false))

        // A retry of the conflicting body is a duplicate of it; the first body still is one too.
        let retry = try await harness.post(body(1_700_000_009), batchID: "static")
        #expect(retry.header("Apsio-Duplicate") == "true")
        #expect(retry.header(GatewayIntake.conflictHeader) == nil)
        #expect(try await harness.post(body(1_700_000_000), batchID: "static").header("Apsio-Duplicate") == "true")
        #expect(try Self.count("outbox", in: harness.directory) == 2)

        // Every further body is stored too; the warning is rate-limited per app.
        #expect(try await conflicts(1_700_000_010))
        #expect(try await conflicts(1_700_000_011))
        let message = "batch id reused with a different body; stored as its own batch"
        func warnings() -> [String] { harness.logs.all.filter { $0.contains(message) } }
        #expect(warnings().count == 1)
        #expect(warnings().first?.contains(#""level":"warning""#) == true)
        #expect(warnings().first?.contains(#""batchId":"static""#) == true)
        #expect(warnings().first?.contains(#""suppressed":"0""#) == true)
        // Another app has its own allowance.
        #expect(try await harness.post(body(1_700_000_000), batchID: "static", app: "news").status == 200)
        #expect(try await conflicts(1_700_000_012, app: "news"))
        #expect(warnings().count == 2)
        harness.clock.advance(milliseconds: GatewayIntake.conflictLogIntervalMilliseconds)
        #expect(try await conflicts(1_700_000_013))
        #expect(warnings().count == 3)
        #expect(warnings().last?.contains(#""suppressed":"2""#) == true)

        #expect(try Self.count("outbox", in: harness.directory) == 7)
        #expect(Set(try Self.outboxBatches(in: harness.directory).map(\.0)).count == 7)
        #expect(harness.gateway.metrics.conflictCount == 5)
        #expect(harness.gateway.metrics.duplicateCount == 2)
        let metrics = try await harness.request("GET", "/metrics").bodyText
        #expect(metrics.contains("pulsegate_conflicts_total 5\n"))
        await harness.stop(removing: false)
    }

    @Test func dedupRowsWrittenBeforeMigration005StillDeduplicate() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A database as migrations 001-004 left it, remembering one batch (keyed by app and batch id).
        let connection = try gatewayDatabase(atMigration: 4, in: directory.path)
        let expiry = ManualClock().wallClockMilliseconds + 7 * 24 * 3600 * 1000
        try connection.execute(
            "INSERT INTO dedup(app, batch_id, body_hash, first_seen, expires_at, duplicates) VALUES (?, ?, ?, ?, ?, 3)",
            ["shop", "old-1", SHA256.hash(Array(Self.body.utf8)), 0, expiry])
        try connection.close()

        let harness = try await GatewayHarness.start(directory: directory)
        #expect(try await harness.post(Self.body, batchID: "old-1").header("Apsio-Duplicate") == "true")
        let other = OTLP.logs(records: [OTLP.record(1_700_000_009)])
        #expect(try await harness.post(other, batchID: "old-1").header(GatewayIntake.conflictHeader) == "true")
        #expect(try Self.count("dedup", in: harness.directory) == 2)
        #expect(try Self.count("outbox", in: harness.directory) == 1)
        let check = try SQLiteConnection(path: directory.path + "/" + GatewayStore.fileName)
        let kept = try check.queryFirst(
            "SELECT duplicates, expires_at FROM dedup WHERE batch_id = 'old-1' AND conflicts = 0"
        ) { (try $0.column(0, as: Int.self), try $0.column(1, as: Int64.self)) }
        #expect(kept?.0 == 4)
        #expect(kept?.1 == expiry)
        await harness.stop(removing: false)
    }

    @Test func outboxPayloadsAreStoredInWireFormAndCountedInPlaintextBytes() async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        let large = OTLP.logs(
            records: (0..<10).map {
                OTLP.record(1_700_000_000 + $0, attributes: [OTLP.string("log.record.uid", "u-\($0)")])
            })
        #expect(try await harness.post(large, batchID: "batch-1").status == 200)
        #expect(try await harness.post(Self.body, batchID: "batch-2").status == 200)
        let connection = try SQLiteConnection(path: harness.directory.path + "/" + GatewayStore.fileName)
        // Below the threshold: the plaintext, labelled none.
        let small = try #require(
            try connection.queryFirst("SELECT compression, payload_bytes, length(payload) FROM outbox WHERE seq = 2") {
                (try $0.column(0, as: Int.self), try $0.column(1, as: Int.self), try $0.column(2, as: Int.self))
            })
        #expect(small.0 == 0)
        #expect(small.1 < CompressionPolicy.defaultCompressionMinBytes)
        #expect(small.1 == small.2)
        let row = try #require(
            try connection.queryFirst("SELECT compression, payload_bytes, payload FROM outbox WHERE seq = 1") {
                (try $0.column(0, as: Int.self), try $0.column(1, as: Int.self), try $0.column(2, as: [UInt8].self))
            })
        // At least the one threshold: one zstd frame, labelled with the msgtrans zstd byte.
        #expect(row.1 >= CompressionPolicy.defaultCompressionMinBytes)
        #expect(row.0 == Int(MsgTrans.Compression.zstd.rawValue))
        #expect(row.2.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) as Bool)
        #expect(row.2.count < row.1)
        // The plaintext is the Pulse envelope, exactly as long as recorded; the byte cap counts it.
        let plain = try StoredPayload(bytes: row.2, compression: row.0, plainCount: row.1).plaintext()
        #expect(plain.count == row.1)
        #expect(String(decoding: plain, as: UTF8.self).hasPrefix("{\"identity\":"))
        #expect(harness.gateway.store.outboxDepth.bytes == row.1 + small.1)
        await harness.stop(removing: false)
    }

    @Test func withoutBatchIDTheBodyHashDeduplicates() async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        #expect(try await harness.post(Self.body).header("Apsio-Duplicate") == nil)
        #expect(try await harness.post(Self.body).header("Apsio-Duplicate") == "true")
        let connection = try SQLiteConnection(path: harness.directory.path + "/" + GatewayStore.fileName)
        let id = try connection.queryFirst("SELECT batch_id FROM dedup") { try $0.column(0, as: String.self) }
        #expect(id == SHA256.hexDigest(Array(Self.body.utf8)))
        await harness.stop(removing: false)
    }

    @Test func gzipAndZstdBodiesAreDecodedBeforeHashing() async throws {
        let harness = try await GatewayHarness.start()
        defer { harness.directory.remove() }
        let plain = Array(Self.body.utf8)
        let gzip = try await harness.request(
            body: Compression.deflate(plain, format: .gzip),
            headers: [("Content-Type", "application/json"), ("Apsio-App-Id", "shop"), ("Content-Encoding", "gzip")])
        #expect(gzip.status == 200)
        let zstd = try await harness.request(
            body: Compression.zstd(plain),
            headers: [("Content-Type", "application/json"), ("Apsio-App-Id", "shop"), ("Content-Encoding", "zstd")])
        #expect(zstd.header("Apsio-Duplicate") == "true")
        await harness.stop()
    }

    @Test func partialSuccessCountsOversizedRecords() async throws {
        let harness = try await GatewayHarness.start()
        let huge = OTLP.string("blob", String(repeating: "z", count: 70_000))
        let json = OTLP.logs(records: [OTLP.record(1, attributes: [huge]), OTLP.record(2)])
        let response = try await harness.post(json)
        #expect(response.status == 200)
        #expect(
            response.bodyText
                == #"{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"1 log record dropped: larger than a Pulse batch (65536 bytes of envelope) on its own"}}"#
        )
        await harness.stop()
    }

    @Test(arguments: [
        ([("Apsio-Batch-Id", "has space")], "Apsio-Batch-Id"),
        ([("Apsio-Sent-At", "yesterday")], "Apsio-Sent-At"),
        ([("Apsio-App-Id", "a/b")], "Apsio-App-Id"),
    ])
    func malformedHeadersAreBadRequests(headers: [(String, String)], named: String) async throws {
        let harness = try await GatewayHarness.start()
        let base =
            [("Content-Type", "application/json")]
            + (headers.contains { $0.0 == "Apsio-App-Id" } ? [] : [("Apsio-App-Id", "shop")])
        let response = try await harness.request(body: Array(Self.body.utf8), headers: base + headers)
        #expect(response.status == 400)
        #expect(response.bodyText.hasPrefix(#"{"code":3,"message":""#))
        #expect(response.bodyText.contains(named))
        await harness.stop()
    }

    @Test func badBodiesAreBadRequestsNamingTheProblem() async throws {
        // `shop` refuses derived identities, so a resource without a platform is a 400.
        var policy = GatewayPolicy()
        policy.appIdentity = AppIdentityPolicy(defaults: AppIdentityPolicy.Settings(missingIdentity: .refuse))
        let harness = try await GatewayHarness.start(policy: policy)
        let notJSON = try await harness.post("{nope")
        #expect(notJSON.status == 400)
        #expect(notJSON.bodyText.contains("not valid JSON"))
        let noPlatform = try await harness.post(
            OTLP.logs(resource: OTLP.iosResource.filter { !$0.contains("os.") }, records: [OTLP.record(1)]))
        #expect(noPlatform.status == 400)
        #expect(noPlatform.bodyText.contains("resource 0: missing platform"))
        let corrupt = try await harness.request(
            body: [0x1F, 0x8B, 0x08, 0x00, 0x01, 0x02],
            headers: [("Content-Type", "application/json"), ("Apsio-App-Id", "shop"), ("Content-Encoding", "gzip")])
        #expect(corrupt.status == 400)
        let noApp = try await harness.request(
            body: Array(Self.body.utf8), headers: [("Content-Type", "application/json")])
        #expect(noApp.status == 400)
        #expect(noApp.bodyText.contains("Apsio-App-Id"))
        #expect(try Self.count("outbox", in: harness.directory) == 0)
        #expect(try Self.count("dedup", in: harness.directory) == 0)
        await harness.stop()
    }

    @Test func defaultAppAndAllowList() async throws {
        let harness = try await GatewayHarness.start(
            policy: GatewayPolicy(defaultAppID: "shop", allowedAppIDs: ["shop"]))
        let defaulted = try await harness.request(
            body: Array(Self.body.utf8), headers: [("Content-Type", "application/json")])
        #expect(defaulted.status == 200)
        let forbidden = try await harness.post(Self.body, app: "intruder")
        #expect(forbidden.status == 403)
        #expect(forbidden.bodyText == #"{"code":7,"message":"app intruder is not allowed on this gateway"}"#)
        await harness.stop()
    }

    @Test func mediaTypesEncodingsAndMethods() async throws {
        let harness = try await GatewayHarness.start()
        let body = Array(Self.body.utf8)
        let withParameters = try await harness.request(
            body: body, headers: [("Content-Type", "Application/JSON; charset=utf-8"), ("Apsio-App-Id", "shop")])
        #expect(withParameters.status == 200)
        for type in ["text/plain", "application/xml", "nonsense"] {
            let response = try await harness.request(
                body: body, headers: [("Content-Type", type), ("Apsio-App-Id", "shop")])
            #expect(response.status == 415, "\(type)")
        }
        let missingType = try await harness.request(body: body, headers: [("Apsio-App-Id", "shop")])
        #expect(missingType.status == 415)
        let brotli = try await harness.request(
            body: body,
            headers: [("Content-Type", "application/json"), ("Apsio-App-Id", "shop"), ("Content-Encoding", "br")])
        #expect(brotli.status == 415)
        let get = try await harness.request("GET", "/v1/traces", headers: [])
        #expect(get.status == 405)
        #expect(get.header("Allow") == "POST")
        let unknown = try await harness.request("POST", "/v2/logs", body: body)
        #expect(unknown.status == 404)
        await harness.stop()
    }

    @Test func decodedBodyLimitIsContentTooLarge() async throws {
        let harness = try await GatewayHarness.start(maxBodyBytes: 4096)
        let zeros = Compression.deflate([UInt8](repeating: 0x20, count: 64 * 1024), format: .gzip)
        #expect(zeros.count < 4096)
        let response = try await harness.request(
            body: zeros,
            headers: [("Content-Type", "application/json"), ("Apsio-App-Id", "shop"), ("Content-Encoding", "gzip")])
        #expect(response.status == 413)
        await harness.stop()
    }

    @Test func fullOutboxAnswersTooManyRequestsWithRetryAfter() async throws {
        let harness = try await GatewayHarness.start(policy: GatewayPolicy(outboxMaxBatches: 1, retryAfterSeconds: 7))
        #expect(try await harness.post(Self.body, batchID: "one").status == 200)
        let full = try await harness.post(Self.body, batchID: "two")
        #expect(full.status == 429)
        #expect(full.header("Retry-After") == "7")
        #expect(full.bodyText.hasPrefix(#"{"code":8,"#))
        // Readiness: nothing upstream (no forwarder here) and the outbox is at its cap.
        #expect(try await harness.request("GET", "/readyz", headers: []).status == 503)
        await harness.stop()
    }

    @Test func storageFailureAndShutdownAreServiceUnavailable() async throws {
        let harness = try await GatewayHarness.start(policy: GatewayPolicy(retryAfterSeconds: 3))
        try await harness.gateway.store.close()
        let broken = try await harness.post(Self.body, batchID: "x")
        #expect(broken.status == 503)
        #expect(broken.header("Retry-After") == "3")
        #expect(harness.logs.all.contains { $0.contains("intake commit failed") })
        harness.gateway.intake.beginShutdown()
        let stopping = try await harness.post(Self.body, batchID: "y")
        #expect(stopping.status == 503)
        #expect(stopping.bodyText.contains("shutting down"))
        await harness.stop()
    }

    @Test func operationsEndpoints() async throws {
        let harness = try await GatewayHarness.start()
        #expect(try await harness.post(Self.body).status == 200)
        let live = try await harness.request("GET", "/livez", headers: [])
        #expect(live.status == 200)
        #expect(live.bodyText == "ok\n")
        #expect(try await harness.request("GET", "/readyz", headers: []).status == 200)
        let metrics = try await harness.request("GET", "/metrics", headers: [])
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        let text = metrics.bodyText
        #expect(text.contains(#"pulsegate_http_requests_total{route="/v1/logs",code="200"} 1"#))
        #expect(text.contains("pulsegate_outbox_batches 1\n"))
        #expect(text.contains(#"pulsegate_intake_records_total{signal="logs"} 1"#))
        #expect(text.contains("# TYPE pulsegate_forward_latency_seconds histogram"))
        #expect(try await harness.request("POST", "/livez", headers: []).status == 405)
        await harness.stop()
    }
}
