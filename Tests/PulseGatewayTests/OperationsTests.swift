import PulseJSON
import PulseKit
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseGateway

/// Issue 16: what an operator sees — refused requests explained in the log (rate-limited), request
/// ids from the request to the outbox row to the forwarder's log line, upstream outages warned at
/// start and recovery, the per-app and process metrics, the traffic summary and `/status.json`.
@Suite struct OperationsTests {
    static let body = OTLP.logs(records: [
        OTLP.record(1_700_000_000, attributes: [OTLP.string("log.record.uid", "u-1")])
    ])

    /// The log lines with message `msg`, parsed.
    static func lines(_ harness: GatewayHarness, _ msg: String) -> [JSONValue] {
        harness.logs.all.compactMap { line in
            guard let value = try? JSONValue.parse(Array(line.utf8)), case .string(msg)? = value["msg"] else {
                return nil
            }
            return value
        }
    }

    static func field(_ line: JSONValue, _ key: String) -> String? {
        if case .string(let text)? = line[key] { return text }
        return nil
    }

    /// The value of the sample `series` (name and labels exactly as rendered) in a `/metrics` body.
    static func sample(_ metrics: String, _ series: String) -> Double? {
        for line in metrics.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    static func metrics(_ harness: GatewayHarness) async throws -> String {
        try await harness.request("GET", "/metrics", headers: []).bodyText
    }

    @Test func refusedRequestIsExplainedOncePerIntervalWithItsRequestID() async throws {
        let harness = try await GatewayHarness.start()
        let headers = [("Content-Type", "text/plain"), ("Apsio-App-Id", "shop"), ("X-Request-Id", "phone-req-1")]
        let first = try await harness.request("POST", "/v1/logs", body: Array("x".utf8), headers: headers)
        #expect(first.status == 415)
        #expect(first.header("X-Request-Id") == "phone-req-1")
        let message = try #require(Self.field(try JSONValue.parse(first.body), "message"))
        for _ in 0..<3 {
            #expect(
                try await harness.request("POST", "/v1/logs", body: Array("x".utf8), headers: headers).status == 415)
        }
        var refused = Self.lines(harness, "request refused")
        #expect(refused.count == 1)
        let line = try #require(refused.first)
        #expect(Self.field(line, "level") == "info")
        #expect(Self.field(line, "requestId") == "phone-req-1")
        #expect(Self.field(line, "app") == "shop")
        #expect(Self.field(line, "route") == "/v1/logs")
        #expect(Self.field(line, "status") == "415")
        #expect(Self.field(line, "reason") == message)
        #expect(Self.field(line, "client") == "127.0.0.1")
        #expect(Self.field(line, "suppressed") == "0")

        // Another reason of the same app is its own key; another app with the same reason too.
        let forbidden = try await harness.post(Self.body, extraHeaders: [("Apsio-Sent-At", "yesterday")])
        #expect(forbidden.status == 400)
        let otherApp = try await harness.request(
            "POST", "/v1/logs", body: Array("x".utf8), headers: [("Content-Type", "text/plain"), ("Apsio-App-Id", "b")])
        #expect(otherApp.status == 415)
        refused = Self.lines(harness, "request refused")
        #expect(refused.count == 3)
        #expect(refused.map { Self.field($0, "app") } == ["shop", "shop", "b"])

        // A minute later the next one passes and says how many were held back.
        harness.clock.advance(milliseconds: RejectionLog.intervalMilliseconds)
        #expect(try await harness.request("POST", "/v1/logs", body: Array("x".utf8), headers: headers).status == 415)
        refused = Self.lines(harness, "request refused")
        #expect(refused.count == 4)
        #expect(refused.last.flatMap { Self.field($0, "suppressed") } == "3")
        await harness.stop()
    }

    @Test func bodyRefusedByTheHTTPServerIsExplainedAndCarriesTheRequestID() async throws {
        let harness = try await GatewayHarness.start(maxBodyBytes: 1024)
        let port = harness.gateway.httpPort
        let response = try await RawHTTPConnection.exchange(
            port: port,
            raw: "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
                + "X-Request-Id: too-big-1\r\nContent-Length: 1025\r\n\r\n")
        #expect(response.status == 413)
        #expect(response.header("X-Request-Id") == "too-big-1")
        #expect(response.bodyText == #"{"code":3,"message":"the body is larger than 1024 bytes"}"#)
        let line = try #require(Self.lines(harness, "request refused").first)
        #expect(Self.field(line, "requestId") == "too-big-1")
        #expect(Self.field(line, "status") == "413")
        #expect(Self.field(line, "app") == "shop")
        #expect(Self.field(line, "reason") == "the body is larger than 1024 bytes")
        // A chunked body that crosses the limit is answered while it is still arriving: the same.
        let chunked = try await RawHTTPConnection.exchange(
            port: port,
            raw: "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
                + "X-Request-Id: too-big-2\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n"
                + String(repeating: "x", count: 2048) + "\r\n")
        #expect(chunked.status == 413)
        #expect(chunked.header("X-Request-Id") == "too-big-2")
        #expect(chunked.bodyText == #"{"code":3,"message":"the body is larger than 1024 bytes"}"#)
        #expect(Self.lines(harness, "request refused").count == 1)  // same app and reason: rate-limited
        #expect(harness.gateway.telemetry.rejections.recent.first?.requestID == "too-big-2")
        let metrics = try await Self.metrics(harness)
        #expect(Self.sample(metrics, #"pulsegate_app_rejections_total{app="shop",reason="too_large"}"#) == 2)
        #expect(Self.sample(metrics, #"pulsegate_http_requests_total{route="/v1/logs",code="413"}"#) == 2)
        await harness.stop()
    }

    @Test func refusalsOfTheOtherAppRoutesAreExplainedToo() async throws {
        let harness = try await GatewayHarness.start(policy: GatewayPolicy(allowedAppIDs: ["shop"]))
        let policy = try await harness.request("GET", "/v1/policy", headers: [("Apsio-App-Id", "news")])
        #expect(policy.status == 403)
        for path in ["/nowhere", "/elsewhere"] {
            #expect(try await harness.request("GET", path, headers: [("Apsio-App-Id", "shop")]).status == 404)
        }
        let refused = Self.lines(harness, "request refused")
        #expect(refused.map { Self.field($0, "route") } == ["/v1/policy", "other"])
        #expect(refused.first.flatMap { Self.field($0, "reason") } == "app news is not allowed on this gateway")
        #expect(refused.first.flatMap { Self.field($0, "requestId") } == policy.header("X-Request-Id"))
        // Unknown paths share one rate-limit key per app; the line quotes the first.
        #expect(refused.last.flatMap { Self.field($0, "reason") } == "no route for /nowhere")
        #expect(harness.gateway.telemetry.rejections.recent.map(\.reason).first == "no route for /elsewhere")
        await harness.stop()
    }

    @Test func partlyRefusedRequestIsExplainedWithTheErrorMessage() async throws {
        let harness = try await GatewayHarness.start()
        let huge = OTLP.string("blob", String(repeating: "z", count: 70_000))
        let response = try await harness.post(OTLP.logs(records: [OTLP.record(1, attributes: [huge]), OTLP.record(2)]))
        #expect(response.status == 200)
        let line = try #require(Self.lines(harness, "request partly refused").first)
        #expect(Self.field(line, "status") == "200")
        #expect(
            Self.field(line, "reason")
                == "1 log record dropped: larger than a Pulse batch (65536 bytes of envelope) on its own")
        #expect(Self.field(line, "requestId") == response.header("X-Request-Id"))
        let metrics = try await Self.metrics(harness)
        #expect(Self.sample(metrics, #"pulsegate_app_rejections_total{app="shop",reason="partial"}"#) == 1)
        await harness.stop()
    }

    @Test func requestIDsAreAcceptedWhenWellFormedAndGeneratedOtherwise() async throws {
        // Even with a constant random source (the generator's seed), generated ids differ.
        let harness = try await GatewayHarness.start(random: RandomSource.half)
        var generated: [String] = [
            try #require(try await harness.request("GET", "/livez", headers: []).header("X-Request-Id"))
        ]
        let cases: [(String, String?)] = [
            ("trace-01HZX4:abc", "trace-01HZX4:abc"),
            (String(repeating: "a", count: 128), String(repeating: "a", count: 128)),
            (String(repeating: "a", count: 129), nil), ("has space", nil), ("<script>", nil),
        ]
        for (offered, echoed) in cases {
            let response = try await harness.request("GET", "/nowhere", headers: [("X-Request-Id", offered)])
            #expect(response.status == 404)
            let id = try #require(response.header("X-Request-Id"))
            if let echoed {
                #expect(id == echoed)
            } else {
                generated.append(id)
            }
        }
        #expect(generated.count == 4)
        #expect(Set(generated).count == generated.count)
        #expect(generated.allSatisfy { id in id.utf8.count == 32 && id.utf8.allSatisfy { Self.isLowerHex($0) } })
        await harness.stop()
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }

    @Test func generatedRequestIDsAreDistinctAcrossThreadsAndGenerators() async throws {
        let generator = RequestIDGenerator(seed: .system)
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<4 { group.addTask { (0..<5_000).map { _ in generator.next().value } } }
            var all: [String] = []
            for await batch in group { all += batch }
            return all
        }
        #expect(Set(ids).count == 20_000)
        // Same seed, same process: the same sequence (the seed is the only injected input).
        let first = RequestIDGenerator(seed: RandomSource(seed: 25))
        let second = RequestIDGenerator(seed: RandomSource(seed: 25))
        #expect((0..<3).map { _ in first.next() } == (0..<3).map { _ in second.next() })
        // Another seed: other ids.
        let other = RequestIDGenerator(seed: RandomSource(seed: 75))
        #expect(other.next() != RequestIDGenerator(seed: RandomSource(seed: 25)).next())
        // The counter's mix is a bijection: distinct counters never collide.
        #expect(Set((0..<UInt64(10_000)).map(RequestIDGenerator.mix)).count == 10_000)
    }

    @Test func requestIDIsStoredWithTheOutboxRows() async throws {
        // No upstream: the rows stay in the outbox to be read back.
        let harness = try await GatewayHarness.start()
        let response = try await harness.post(Self.body, batchID: "rid-1", extraHeaders: [("X-Request-Id", "req-42")])
        #expect(response.status == 200)
        #expect(response.header("X-Request-Id") == "req-42")
        let pending = try await harness.gateway.store.pendingIdentities()
        let rows = try await harness.gateway.store.nextRows(
            identityKey: try #require(pending.first).identityKey, limit: 8)
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { $0.requestID == "req-42" && $0.httpBatchID == "rid-1" })
        let metrics = try await Self.metrics(harness)
        #expect(Self.sample(metrics, #"pulsegate_app_outbox_batches{app="shop"}"#) == Double(rows.count))
        #expect(Self.sample(metrics, #"pulsegate_app_forwarded_total{app="shop"}"#) == 0)
        await harness.stop()
    }

    @Test func forwardingFailureLogNamesTheRequestID() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [400])
        let harness = try await ForwarderTests.harness(upstream)
        let response = try await harness.post(Self.body, batchID: "rid-2", extraHeaders: [("X-Request-Id", "req-43")])
        #expect(response.status == 200)
        #expect(await eventually { !Self.lines(harness, "upstream refused a batch; moved to dead letters").isEmpty })
        let line = try #require(Self.lines(harness, "upstream refused a batch; moved to dead letters").first)
        #expect(Self.field(line, "requestId") == "req-43")
        #expect(Self.field(line, "batchId") == "rid-2")
        #expect(Self.field(line, "code") == "400")
        #expect(await eventually { (try? await harness.gateway.store.deadLetters().map(\.requestID)) == ["req-43"] })
        let status = try JSONValue.parse(try await harness.request("GET", "/status.json", headers: []).body)
        guard case .array(let letters)? = status["deadLetters"], let letter = letters.first else {
            Issue.record("no dead letter on /status.json")
            return
        }
        #expect(Self.field(letter, "requestId") == "req-43")
        #expect(Self.field(letter, "message") == "scripted 400")
        let metrics = try await Self.metrics(harness)
        #expect(Self.sample(metrics, #"pulsegate_app_dead_letters_total{app="shop"}"#) == 1)
        #expect(Self.sample(metrics, "pulsegate_dead_letters") == 1)
        #expect(Self.sample(metrics, #"pulsegate_app_outbox_batches{app="shop"}"#) == 0)
        await harness.stop()
        await upstream.stop()
    }

    @Test func upstreamOutageIsWarnedWhenItStartsAndWhenItEnds() async throws {
        let upstream = try await ScriptedUpstream.start(uploadCodes: [503, 503])
        // One clock for wall and monotonic time: each retry is due once it is stepped past the backoff.
        let clock = ManualClock()
        let harness = try await ForwarderTests.harness(upstream, clock: clock)
        #expect(try await harness.post(Self.body).status == 200)
        #expect(
            await eventually {
                clock.advance(milliseconds: 2_000)
                harness.gateway.pokeForwarder()
                return harness.gateway.outboxBatches == 0
            })
        let failing = Self.lines(harness, "upstream failing; batches stay in the outbox")
        #expect(failing.count == 1)
        #expect(failing.first.flatMap { Self.field($0, "level") } == "warning")
        #expect(failing.first.flatMap { Self.field($0, "reason") }?.hasPrefix("code 503") == true)
        #expect(await eventually { Self.lines(harness, "upstream recovered").count == 1 })
        let recovered = try #require(Self.lines(harness, "upstream recovered").first)
        #expect(Self.field(recovered, "failures") == "2")
        #expect(Self.field(recovered, "level") == "warning")
        await harness.stop()
        await upstream.stop()
    }

    @Test func metricsMoveAsDocumented() async throws {
        let upstream = try await ScriptedUpstream.start()
        let monotonic = ManualClock(now: .seconds(10))
        let harness = try await ForwarderTests.harness(upstream, clock: monotonic)
        #expect(try await harness.post(Self.body, batchID: "m-1").status == 200)
        #expect(try await harness.post(Self.body, batchID: "m-1").header("Apsio-Duplicate") == "true")
        let other = OTLP.logs(records: [OTLP.record(1_700_000_001, attributes: [OTLP.string("log.record.uid", "u-2")])])
        #expect(try await harness.post(other, batchID: "m-1").header("Apsio-Batch-Conflict") == "true")
        #expect(
            try await harness.request(
                "POST", "/v1/logs", body: Array("x".utf8),
                headers: [("Content-Type", "text/plain"), ("Apsio-App-Id", "shop")]
            ).status == 415)
        let app = #"{app="shop"}"#
        // The forwarder counts a batch after its outbox row is deleted, so the per-app counters can
        // trail the store's depth by a moment: wait for the scrape itself to show both forwarded.
        #expect(
            await eventually {
                guard harness.gateway.outboxBatches == 0, let metrics = try? await Self.metrics(harness) else {
                    return false
                }
                return Self.sample(metrics, "pulsegate_app_forwarded_total" + app) == 2
                    && Self.sample(metrics, "pulsegate_app_outbox_batches" + app) == 0
            })
        let metrics = try await Self.metrics(harness)
        #expect(Self.sample(metrics, "pulsegate_app_requests_total" + app) == 4)
        #expect(Self.sample(metrics, "pulsegate_app_batches_accepted_total" + app) == 2)
        #expect(Self.sample(metrics, "pulsegate_app_records_total" + app) == 2)
        #expect(Self.sample(metrics, "pulsegate_app_duplicates_total" + app) == 1)
        #expect(Self.sample(metrics, "pulsegate_app_conflicts_total" + app) == 1)
        #expect(
            Self.sample(metrics, #"pulsegate_app_rejections_total{app="shop",reason="unsupported_media_type"}"#) == 1)
        #expect(Self.sample(metrics, "pulsegate_app_forwarded_total" + app) == 2)
        #expect(Self.sample(metrics, "pulsegate_app_dead_letters_total" + app) == 0)
        #expect(Self.sample(metrics, "pulsegate_app_outbox_batches" + app) == 0)
        let wire = try #require(Self.sample(metrics, "pulsegate_app_request_bytes_total" + app))
        #expect(wire == Double(Self.body.utf8.count * 2 + other.utf8.count + 1))
        // Durations: the test's monotonic clock stands still, so every answer took 0 s.
        #expect(
            Self.sample(metrics, #"pulsegate_http_request_duration_seconds_count{route="/v1/logs",status="2xx"}"#) == 3)
        #expect(
            Self.sample(
                metrics, #"pulsegate_http_request_duration_seconds_bucket{route="/v1/logs",status="2xx",le="0.001"}"#)
                == 3)
        #expect(
            Self.sample(metrics, #"pulsegate_http_request_duration_seconds_count{route="/v1/logs",status="4xx"}"#) == 1)
        #expect(Self.sample(metrics, #"pulsegate_build_info{version="unknown",component="gateway"}"#) == 1)
        #expect(Self.sample(metrics, "pulsegate_config_max_body_bytes") == Double(16 << 20))
        #expect(Self.sample(metrics, "pulsegate_config_outbox_max_batches") == 1_000_000)
        #expect(Self.sample(metrics, "pulsegate_config_dedup_retention_seconds") == Double(7 * 24 * 3600))
        #expect((Self.sample(metrics, "process_cpu_seconds_total") ?? 0) > 0)
        #expect((Self.sample(metrics, "process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((Self.sample(metrics, "process_open_fds") ?? 0) > 3)
        let start = try #require(Self.sample(metrics, "process_start_time_seconds"))
        #expect(start > 1_600_000_000)
        await harness.stop()
        await upstream.stop()
    }

    @Test func appLabelsAreBounded() async throws {
        let harness = try await GatewayHarness.start()
        for index in 0..<(AppMetrics.maxLabelledApps + 5) {
            #expect(try await harness.post(Self.body, app: "app-\(index)").status == 200)
        }
        let metrics = try await Self.metrics(harness)
        let labelled = metrics.split(separator: "\n").filter { $0.hasPrefix("pulsegate_app_requests_total{") }
        #expect(labelled.count == AppMetrics.maxLabelledApps + 1)
        #expect(Self.sample(metrics, #"pulsegate_app_requests_total{app="app-0"}"#) == 1)
        #expect(Self.sample(metrics, #"pulsegate_app_requests_total{app="other"}"#) == 5)
        await harness.stop()

        // With allowedAppIds, exactly those apps have labels; a refused app counts as other.
        let configured = try await GatewayHarness.start(policy: GatewayPolicy(allowedAppIDs: ["shop"]))
        #expect(try await configured.post(Self.body).status == 200)
        #expect(try await configured.post(Self.body, app: "intruder").status == 403)
        let refused = try await Self.metrics(configured)
        #expect(Self.sample(refused, #"pulsegate_app_requests_total{app="shop"}"#) == 1)
        #expect(Self.sample(refused, #"pulsegate_app_rejections_total{app="other",reason="forbidden"}"#) == 1)
        #expect(!refused.contains(#"app="intruder""#))
        await configured.stop()
    }

    @Test func trafficSummaryIsLoggedWhileBatchesFlowAndNotWhenIdle() async throws {
        let monotonic = ManualClock(now: .seconds(1))
        let harness = try await GatewayHarness.start(clock: monotonic)
        // Batches before the first tick count in the first line.
        #expect(try await harness.post(Self.body, batchID: "s-1").status == 200)
        harness.gateway.summaryTick()
        #expect(try await harness.post(Self.body, batchID: "s-1").status == 200)
        monotonic.advance(milliseconds: TrafficSummary.intervalMilliseconds - 1)
        harness.gateway.summaryTick()
        #expect(Self.lines(harness, "traffic").isEmpty)
        monotonic.advance(milliseconds: 1)
        harness.gateway.summaryTick()
        let line = try #require(Self.lines(harness, "traffic").first)
        #expect(Self.field(line, "level") == "info")
        #expect(Self.field(line, "accepted") == "1")
        #expect(Self.field(line, "duplicates") == "1")
        #expect(Self.field(line, "rejected") == "0")
        #expect(Self.field(line, "forwarded") == "0")
        #expect(Self.field(line, "outbox") == String(harness.gateway.outboxBatches))
        // Idle: no line.
        monotonic.advance(milliseconds: TrafficSummary.intervalMilliseconds * 3)
        harness.gateway.summaryTick()
        #expect(Self.lines(harness, "traffic").count == 1)
        await harness.stop()
    }

    @Test func statusJSONShowsWhatMetricsExports() async throws {
        let monotonic = ManualClock(now: .seconds(1))
        let harness = try await GatewayHarness.start(clock: monotonic)
        harness.gateway.summaryTick()
        #expect(try await harness.post(Self.body, batchID: "st-1").status == 200)
        // One batch in the 30 s between two samples: 2 per minute.
        monotonic.advance(milliseconds: 30_000)
        harness.gateway.summaryTick()
        #expect(try await harness.post(Self.body, app: "shop", extraHeaders: [("Apsio-Sent-At", "soon")]).status == 400)
        let metrics = try await Self.metrics(harness)
        let status = try JSONValue.parse(try await harness.request("GET", "/status.json", headers: []).body)
        guard case .array(let apps)? = status["apps"], let shop = apps.first,
            case .object(let outbox)? = status["outbox"], case .array(let rejections)? = status["rejections"]
        else {
            Issue.record("unexpected /status.json shape")
            return
        }
        func number(_ value: JSONValue?) -> Double? {
            switch value {
            case .int(let int)?: return Double(int)
            case .double(let double)?: return double
            default: return nil
            }
        }
        #expect(Self.field(shop, "app") == "shop")
        #expect(number(shop["requests"]) == Self.sample(metrics, #"pulsegate_app_requests_total{app="shop"}"#))
        #expect(number(shop["accepted"]) == Self.sample(metrics, #"pulsegate_app_batches_accepted_total{app="shop"}"#))
        #expect(number(shop["rejected"]) == 1)
        #expect(number(shop["acceptedPerMinute"]) == 2)
        #expect(number(shop["forwardedPerMinute"]) == 0)
        #expect(number(shop["outboxBatches"]) == Self.sample(metrics, #"pulsegate_app_outbox_batches{app="shop"}"#))
        #expect(
            number(outbox.first { $0.key == "batches" }?.value) == Self.sample(metrics, "pulsegate_outbox_batches"))
        #expect(rejections.count == 1)
        #expect(rejections.first.flatMap { Self.field($0, "reason") }?.contains("Apsio-Sent-At") == true)
        let page = try await harness.request("GET", "/status", headers: [])
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.bodyText.contains(#"data-metric="pulsegate_app_requests_total{app=&quot;shop&quot;}">2<"#))
        #expect(!page.bodyText.contains("<script"))
        await harness.stop()
    }

    @Test func rowsStoredBeforeMigration7HaveNoRequestIDAndStillForwardAndRequeue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = try gatewayDatabase(atMigration: 6, in: directory.path)
        try connection.execute(
            "INSERT INTO identities(id, identity_key, app, connect) VALUES (1, 'key', 'shop', x'7B7D')")
        try connection.execute(
            """
            INSERT INTO outbox(app, identity_key, identity_id, kind, priority, pulse_batch_id, payload, compression,
                record_count, fallback, http_batch_id, next_attempt_at, created_at, payload_bytes)
            VALUES ('shop', 'key', 1, 1, 1, 'pb', x'7B7D', 0, 1, NULL, 'http-1', 0, 0, 2)
            """)
        try connection.close()
        let store = try await GatewayStore.open(dataDirectory: directory.path)
        let row = try #require(try await store.nextRows(identityKey: "key", limit: 1).first)
        #expect(row.requestID == nil)
        try await store.deadLetter(seq: row.seq, code: 400, message: "no", now: 1)
        #expect(try await store.deadLetters().map(\.requestID) == [nil])
        #expect(try await store.requeue(now: 2) == 1)
        #expect(try await store.nextRows(identityKey: "key", limit: 1).first?.requestID == nil)
        try await store.close()
    }

    @Test func statusPageEscapesWhatClientsSend() {
        var snapshot = StatusSnapshot(
            generatedAt: 0, version: "v", upstream: "u", upstreamConnections: 0,
            upstreamHealth: UpstreamHealth.Snapshot(
                failing: true, failures: 1, lastReason: "<b>x</b>", failingForMilliseconds: 0, outages: 1),
            outboxBatches: 0, outboxBytes: 0, oldestAgeSeconds: 0, deadLetterCount: 0, apps: [], deadLetters: [],
            rejections: [])
        snapshot.rejections = [
            RejectionLog.Entry(
                at: 0, requestID: "r", app: "a", route: "/v1/logs", status: 400, reason: "bad \"<img src=x>\" & more",
                client: "c", partial: false)
        ]
        let html = StatusPage.html(snapshot)
        #expect(html.contains("bad &quot;&lt;img src=x&gt;&quot; &amp; more"))
        #expect(html.contains("&lt;b&gt;x&lt;/b&gt;"))
        #expect(!html.contains("<img"))
    }
}
