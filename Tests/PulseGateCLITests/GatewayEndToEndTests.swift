import Foundation
import PulseIngest
import PulseTestSupport
import Testing

@testable import PulseGateway

/// A gateway (`GatewayApp`) forwarding to the real reference ingest server over loopback.
struct GatewayStack {
    let root: ScratchDirectory
    let ingest: IngestFixture
    let configuration: GatewayConfiguration
    let gateway: RunningGateway

    var port: Int { gateway.httpPort }
    var dataDirectory: String { configuration.dataDirectory }

    static func start(
        policy: GatewayPolicy = GatewayPolicy(), maxBodyBytes: Int = 16 << 20,
        forwarding: ForwardingSettings = ForwardingSettings(backoffBase: .milliseconds(50), backoffMax: .seconds(1)),
        ingestPolicy: IngestPolicy = .acceptingEveryApp
    ) async throws -> GatewayStack {
        let root = try ScratchDirectory("e2e")
        let ingest = try await IngestFixture.start(directory: root.path + "/ingest", policy: ingestPolicy)
        let configuration = GatewayConfiguration(
            dataDirectory: root.path + "/gateway", listenPort: 0, upstream: ingest.address, policy: policy,
            maxBodyBytes: maxBodyBytes, shutdownGracePeriod: .seconds(2), forwarding: forwarding)
        let gateway = try await GatewayApp.start(configuration)
        return GatewayStack(root: root, ingest: ingest, configuration: configuration, gateway: gateway)
    }

    /// Shuts the gateway down and starts a new one on the same data directory and upstream.
    func restartingGateway() async throws -> GatewayStack {
        await gateway.shutdown()
        let next = try await GatewayApp.start(configuration)
        return GatewayStack(root: root, ingest: ingest, configuration: configuration, gateway: next)
    }

    func post(
        _ json: String, path: String = "/v1/logs", app: String? = "shop", batchID: String? = nil,
        headers: [(String, String)] = []
    ) async throws -> RawHTTPResponse {
        try await GatewayHTTP.post(port: port, json, path: path, app: app, batchID: batchID, headers: headers)
    }

    func request(_ method: String, _ path: String, body: [UInt8] = [], headers: [(String, String)])
        async throws -> RawHTTPResponse
    {
        try await GatewayHTTP.request(port: port, method, path, body: body, headers: headers)
    }

    /// Waits until the ingest stored at least `count` events of `app` and the outbox is empty.
    func waitForDelivery(app: String, count: Int) async -> Bool {
        await eventually(within: .seconds(30)) {
            let stored = (try? await ingest.eventIDs(app: app).count) ?? 0
            return stored >= count && gateway.outboxBatches == 0
        }
    }

    func stop() async {
        await gateway.shutdown()
        await ingest.stop()
        root.remove()
    }
}

/// Every status code of the intake, end to end with the real upstream, and what reaches it.
@Suite(.serialized) struct GatewayEndToEndTests {
    /// `{"code":<grpc>,"message":"…"}` with the status, and the message containing `named`.
    static func expectRejection(
        _ response: RawHTTPResponse, _ status: Int, grpc: Int, named: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status == status, "\(named): \(response.bodyText)", sourceLocation: sourceLocation)
        #expect(
            response.bodyText.hasPrefix(#"{"code":\#(grpc),"message":""#), "\(named): \(response.bodyText)",
            sourceLocation: sourceLocation)
        #expect(response.bodyText.contains(named), "\(response.bodyText)", sourceLocation: sourceLocation)
    }

    static func batch(_ uids: [String]) -> String {
        Payload.logs(records: uids.map { Payload.uidRecord($0) })
    }

    @Test func everyStatusCodeWithTheRealUpstream() async throws {
        var policy = GatewayPolicy(
            allowedAppIDs: ["shop", "locked"], retryAfterSeconds: 4, appKeys: try AppKeys(["locked": ["k-1", "k-2"]]))
        // `shop` refuses derived identities, so a resource without one is the 400 below.
        policy.appIdentity = AppIdentityPolicy(apps: ["shop": AppIdentityPolicy.Settings(missingIdentity: .refuse)])
        let stack = try await GatewayStack.start(policy: policy, maxBodyBytes: 256 * 1024)
        defer { stack.root.remove() }

        // 200 {}
        let accepted = try await stack.post(Self.batch(["ok.0", "ok.1", "ok.2"]), batchID: "ok-1")
        #expect(accepted.status == 200)
        #expect(accepted.bodyText == "{}")
        #expect(accepted.header("Apsio-Duplicate") == nil)

        // 200 partialSuccess: one record too large for a Pulse batch on its own.
        let huge = Payload.string("blob", String(repeating: "z", count: 70_000))
        let partial = try await stack.post(
            Payload.logs(records: [
                Payload.record(1_700_000_000, attributes: [huge, Payload.string("log.record.uid", "big")]),
                Payload.uidRecord("small"),
            ]), batchID: "partial-1")
        #expect(partial.status == 200)
        #expect(
            partial.bodyText
                == #"{"partialSuccess":{"rejectedLogRecords":"1","errorMessage":"1 log record dropped: larger than a Pulse batch (65536 bytes of envelope) on its own"}}"#
        )

        // 200 Apsio-Duplicate, then 200 conflict (same id, other body: stored as its own batch).
        let duplicate = try await stack.post(Self.batch(["ok.0", "ok.1", "ok.2"]), batchID: "ok-1")
        #expect(duplicate.status == 200)
        #expect(duplicate.bodyText == "{}")
        #expect(duplicate.header("Apsio-Duplicate") == "true")
        #expect(duplicate.header(GatewayIntake.conflictHeader) == nil)
        let conflict = try await stack.post(Self.batch(["conflicting"]), batchID: "ok-1")
        #expect(conflict.status == 200)
        #expect(conflict.header("Apsio-Duplicate") == nil)
        #expect(conflict.header(GatewayIntake.conflictHeader) == "true")

        // 400: each header problem.
        let body = Self.batch(["never"])
        Self.expectRejection(
            try await stack.post(body, batchID: "has space"), 400, grpc: 3, named: "Apsio-Batch-Id")
        Self.expectRejection(try await stack.post(body, app: "a/b"), 400, grpc: 3, named: "Apsio-App-Id")
        Self.expectRejection(try await stack.post(body, app: nil), 400, grpc: 3, named: "missing Apsio-App-Id")
        Self.expectRejection(
            try await stack.post(body, headers: [("Apsio-Sent-At", "yesterday")]), 400, grpc: 3, named: "Apsio-Sent-At")
        // 400: each body problem.
        Self.expectRejection(try await stack.post("{nope"), 400, grpc: 3, named: "not valid JSON")
        Self.expectRejection(try await stack.post("[1]"), 400, grpc: 3, named: "not an OTLP export request")
        Self.expectRejection(
            try await stack.post(#"{"resourceLogs":5}"#), 400, grpc: 3, named: "resourceLogs must be an array")
        let noPlatform = Payload.logs(
            resource: Payload.iosResource().filter { !$0.contains("os.") }, records: [Payload.uidRecord("np")])
        Self.expectRejection(try await stack.post(noPlatform), 400, grpc: 3, named: "resource 0: missing platform")
        let noSDK = Payload.logs(
            resource: Payload.iosResource().filter { !$0.contains("telemetry.sdk") }, records: [Payload.uidRecord("ns")]
        )
        Self.expectRejection(try await stack.post(noSDK), 400, grpc: 3, named: "sdkVersion")
        let noDevice = Payload.logs(
            resource: Payload.iosResource().filter { !$0.contains("device.id") && !$0.contains("installation") },
            records: [Payload.uidRecord("nd")])
        Self.expectRejection(
            try await stack.post(noDevice), 400, grpc: 3, named: "missing deviceId and installationId")
        let unknownKind = Payload.logs(records: [
            Payload.record(1, attributes: [Payload.string("apsio.event.kind", "Bogus")])
        ])
        Self.expectRejection(try await stack.post(unknownKind), 400, grpc: 3, named: "apsio.event.kind")
        let corrupt = try await stack.request(
            "POST", "/v1/logs", body: [0x1F, 0x8B, 0x08, 0x00, 0x01, 0x02],
            headers: [GatewayHTTP.jsonType, ("Apsio-App-Id", "shop"), ("Content-Encoding", "gzip")])
        #expect(corrupt.status == 400)
        #expect(corrupt.bodyText.hasPrefix(#"{"code":3,"#))
        let protobuf = try await stack.request(
            "POST", "/v1/logs", body: [0x0a, 0xff, 0x01],
            headers: [("Content-Type", "application/x-protobuf"), ("Apsio-App-Id", "shop")])
        #expect(protobuf.status == 400)
        #expect(protobuf.header("Content-Type") == "application/x-protobuf")

        // 401: an app with keys, without one, with a wrong one, with another scheme; then a right one.
        let lockedBody = Self.batch(["locked.0"])
        for authorization in [nil, "Bearer nope", "Basic k-1", "Bearer", "bearer k-3"] {
            let response = try await stack.post(
                lockedBody, app: "locked", batchID: "locked-1",
                headers: authorization.map { [("Authorization", $0)] } ?? [])
            #expect(response.status == 401, "\(authorization ?? "none")")
            #expect(response.bodyText == #"{"code":16,"message":"missing or invalid app key"}"#)
            #expect(response.header("WWW-Authenticate") == "Bearer")
        }
        let unlocked = try await stack.post(
            lockedBody, app: "locked", batchID: "locked-1", headers: [("Authorization", "Bearer k-2")])
        #expect(unlocked.status == 200)
        #expect(unlocked.header("Apsio-Duplicate") == nil)  // the 401s stored nothing

        // 403, 404, 405.
        Self.expectRejection(
            try await stack.post(body, app: "intruder"), 403, grpc: 7, named: "app intruder is not allowed")
        Self.expectRejection(try await stack.post(body, path: "/v2/logs"), 404, grpc: 5, named: "no route for /v2/logs")
        for method in ["GET", "PUT", "DELETE"] {
            let response = try await stack.request(method, "/v1/traces", headers: [])
            Self.expectRejection(response, 405, grpc: 12, named: "\(method) is not allowed on /v1/traces")
            #expect(response.header("Allow") == "POST")
        }

        // 413: over the limit after decoding (a small gzip of 512 KiB) and on the wire (declared length).
        let bomb = Compression.deflate([UInt8](repeating: 0x20, count: 512 * 1024), format: .gzip)
        #expect(bomb.count < 256 * 1024)
        let decodedTooLarge = try await stack.request(
            "POST", "/v1/logs", body: bomb,
            headers: [GatewayHTTP.jsonType, ("Apsio-App-Id", "shop"), ("Content-Encoding", "gzip")])
        #expect(decodedTooLarge.status == 413)
        #expect(decodedTooLarge.bodyText.hasPrefix(#"{"code":3,"#))
        let port = stack.port
        let wireTooLarge = try await RawHTTPConnection.exchange(
            port: port,
            raw: "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
                + "Content-Length: \(256 * 1024 + 1)\r\n\r\n")
        #expect(wireTooLarge.status == 413)

        // 415: media type and content encoding.
        for type in ["text/plain", "application/xml"] {
            let response = try await stack.request(
                "POST", "/v1/logs", body: Array(body.utf8), headers: [("Content-Type", type), ("Apsio-App-Id", "shop")])
            Self.expectRejection(response, 415, grpc: 3, named: "Content-Type")
        }
        let brotli = try await stack.request(
            "POST", "/v1/logs", body: Array(body.utf8),
            headers: [GatewayHTTP.jsonType, ("Apsio-App-Id", "shop"), ("Content-Encoding", "br")])
        #expect(brotli.status == 415)
        #expect(brotli.bodyText.hasPrefix(#"{"code":3,"#))

        // What reached the ingest: the accepted records (the conflicting body's too), once; nothing
        // of a rejected request.
        #expect(await stack.waitForDelivery(app: "shop", count: 5))
        #expect(await stack.waitForDelivery(app: "locked", count: 1))
        #expect(Set(try await stack.ingest.eventIDs(app: "shop")) == ["ok.0", "ok.1", "ok.2", "small", "conflicting"])
        #expect(try await stack.ingest.eventIDs(app: "locked") == ["locked.0"])
        #expect(try await stack.ingest.current.counts(app: "shop").events == 5)
        #expect(try await stack.ingest.eventIDs(app: "intruder").isEmpty)

        let metrics = try await stack.request("GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains(#"pulsegate_http_requests_total{route="/v1/logs",code="401"} 5"#))
        #expect(metrics.contains(#"pulsegate_http_requests_total{route="/v1/logs",code="200"} 5"#))
        #expect(metrics.contains("pulsegate_duplicates_total 1\n"))
        #expect(metrics.contains("pulsegate_conflicts_total 1\n"))

        // 503 while shutting down, with Retry-After.
        stack.gateway.intake.beginShutdown()
        let stopping = try await stack.post(Self.batch(["late"]), batchID: "late-1")
        Self.expectRejection(stopping, 503, grpc: 14, named: "shutting down")
        #expect(stopping.header("Retry-After") == "4")
        await stack.gateway.shutdown()
        #expect(try await stack.ingest.eventIDs(app: "shop").count == 5)
        await stack.ingest.stop()
    }

    @Test func duplicatesBeforeAndAfterAGatewayRestartArriveOnce() async throws {
        var stack = try await GatewayStack.start()
        defer { stack.root.remove() }
        let first = Self.batch(["r.0", "r.1"])
        #expect(try await stack.post(first, batchID: "restart-1").header("Apsio-Duplicate") == nil)
        #expect(try await stack.post(first, batchID: "restart-1").header("Apsio-Duplicate") == "true")
        #expect(await stack.waitForDelivery(app: "shop", count: 2))

        stack = try await stack.restartingGateway()
        let replay = try await stack.post(first, batchID: "restart-1")
        #expect(replay.status == 200)
        #expect(replay.header("Apsio-Duplicate") == "true")
        let conflict = try await stack.post(Self.batch(["r.other"]), batchID: "restart-1")
        #expect(conflict.header(GatewayIntake.conflictHeader) == "true")
        // Without Apsio-Batch-Id the body's SHA-256 is the batch id: the same bytes deduplicate too.
        let anonymous = Self.batch(["r.anonymous"])
        #expect(try await stack.post(anonymous).header("Apsio-Duplicate") == nil)
        stack = try await stack.restartingGateway()
        #expect(try await stack.post(anonymous).header("Apsio-Duplicate") == "true")
        #expect(try await stack.post(first, batchID: "restart-1").header("Apsio-Duplicate") == "true")
        // The conflicting body was stored as its own batch; its retry after a restart is a duplicate.
        let conflictRetry = try await stack.post(Self.batch(["r.other"]), batchID: "restart-1")
        #expect(conflictRetry.header("Apsio-Duplicate") == "true")
        #expect(conflictRetry.header(GatewayIntake.conflictHeader) == nil)

        #expect(await stack.waitForDelivery(app: "shop", count: 4))
        let stored = try await stack.ingest.eventIDs(app: "shop")
        #expect(stored.sorted() == ["r.0", "r.1", "r.anonymous", "r.other"])
        let statistics = try stack.ingest.current.statistics().apps["shop"]
        #expect(statistics?.eventBatches == 3)
        #expect(statistics?.duplicateBatches == 0)  // the gateway never sent a batch twice
        await stack.stop()
    }

    @Test func aCollectorWithAStaticBatchIDLosesNoBatch() async throws {
        let stack = try await GatewayStack.start()
        defer { stack.root.remove() }
        // Records without log.record.uid (derived event ids), every batch under the same batch id.
        for second in 0..<5 {
            let body = Payload.logs(records: [Payload.record(1_700_000_000 + second)])
            let response = try await stack.post(body, batchID: "collector")
            #expect(response.status == 200)
            #expect(response.header("Apsio-Duplicate") == nil)
            #expect(response.header(GatewayIntake.conflictHeader) == (second == 0 ? nil : "true"))
        }
        // A retry of an already stored body is still a duplicate.
        let retry = try await stack.post(Payload.logs(records: [Payload.record(1_700_000_003)]), batchID: "collector")
        #expect(retry.header("Apsio-Duplicate") == "true")
        #expect(await stack.waitForDelivery(app: "shop", count: 5))
        #expect(Set(try await stack.ingest.eventIDs(app: "shop")).count == 5)
        let statistics = try stack.ingest.current.statistics().apps["shop"]
        #expect(statistics?.eventBatches == 5)
        #expect(statistics?.duplicateBatches == 0)
        let metrics = try await stack.request("GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains("pulsegate_conflicts_total 4\n"))
        await stack.stop()
    }

    @Test func recordsArriveWithTheDocumentedIdentityKindsAndIds() async throws {
        let stack = try await GatewayStack.start()
        defer { stack.root.remove() }
        let resource = Payload.iosResource(device: "dev-k", installation: "inst-k")
        func uid(_ id: String) -> String { Payload.string("log.record.uid", id) }
        let logs = Payload.logs(
            resource: resource,
            records: [
                Payload.record(1_700_000_000, attributes: [uid("k-log")]),
                Payload.record(1_700_000_001, attributes: [uid("k-error")], extra: #","severityNumber":17"#),
                Payload.record(
                    1_700_000_002, attributes: [uid("k-analytics"), Payload.string("event.name", "cart.add")]),
                Payload.record(
                    1_700_000_003, attributes: [uid("k-crumb"), Payload.string("event.name", "breadcrumb.tap")]),
                Payload.record(
                    1_700_000_004,
                    attributes: [uid("k-runtime"), Payload.string("event.name", "pulsegate.diagnostics")]),
                Payload.record(
                    1_700_000_005, attributes: [uid("k-override"), Payload.string("apsio.event.kind", "Performance")]),
                Payload.record(1_700_000_006),  // no uid: the derived id
                Payload.record(
                    1_700_000_007,
                    attributes: [Payload.string("app.crash.id", "c-77"), Payload.string("exception.type", "SIGABRT")]),
                Payload.record(
                    1_700_000_008, attributes: [uid("k-devcrash"), Payload.string("event.name", "device.crash")]),
                Payload.record(
                    1_700_000_009, attributes: [uid("k-exception"), Payload.string("exception.type", "IOError")]),
            ])
        #expect(try await stack.post(logs, batchID: "kinds-logs").bodyText == "{}")
        let trace = "5b8efff798038103d269b633813fc60c"
        let spans = Payload.spans(
            resource: resource,
            spans: [
                #"{"traceId":"\#(trace)","spanId":"eee19b7ec3c1b174","name":"GET /items","startTimeUnixNano":"1700000010000000000","endTimeUnixNano":"1700000010250000000","attributes":[\#(Payload.string("http.request.method", "GET")),\#(Payload.string("url.full", "https://api.example.com/v1/items?token=abc#frag")),\#(Payload.string("http.request.header.authorization", "Bearer s3cr3t"))]}"#,
                #"{"traceId":"\#(trace)","spanId":"eee19b7ec3c1b175","name":"rpc","kind":3,"startTimeUnixNano":"1700000011000000000","endTimeUnixNano":"1700000011100000000"}"#,
                #"{"traceId":"\#(trace)","spanId":"eee19b7ec3c1b176","name":"render","startTimeUnixNano":"1700000012000000000","endTimeUnixNano":"1700000012100000000"}"#,
            ])
        #expect(try await stack.post(spans, path: "/v1/traces", batchID: "kinds-spans").bodyText == "{}")
        let metrics = Payload.metrics(
            resource: resource,
            metrics: [
                #"{"name":"process.runtime.memory","unit":"By","gauge":{"dataPoints":[{"timeUnixNano":"1700000020000000000","asInt":"1024"}]}}"#,
                #"{"name":"app.frame_time","unit":"ms","gauge":{"dataPoints":[{"timeUnixNano":"1700000020000000000","asDouble":16.5}]}}"#,
            ])
        #expect(try await stack.post(metrics, path: "/v1/metrics", batchID: "kinds-metrics").bodyText == "{}")
        #expect(await stack.waitForDelivery(app: "shop", count: 14))

        let events = try await stack.ingest.events(app: "shop")
        let kinds = Dictionary(events.map { ($0.eventId, $0.kind) }, uniquingKeysWith: { first, _ in first })
        let derived = Payload.fieldHash(["shop", "kinds-logs", "0", "0", "6"])
        #expect(kinds["k-log"] == "Log")
        #expect(kinds["k-error"] == "Error")
        #expect(kinds["k-exception"] == "Error")
        #expect(kinds["k-analytics"] == "Analytics")
        #expect(kinds["k-crumb"] == "Breadcrumb")
        #expect(kinds["k-runtime"] == "Runtime")
        #expect(kinds["k-override"] == "Performance")
        #expect(kinds["k-devcrash"] == "Crash")
        #expect(kinds[derived] == "Log")
        #expect(kinds[trace + "eee19b7ec3c1b174"] == "Network")
        #expect(kinds[trace + "eee19b7ec3c1b175"] == "Network")
        #expect(kinds[trace + "eee19b7ec3c1b176"] == "Performance")
        let metricEvents = events.filter { $0.json.contains(#""otlp.signal":"metrics""#) }
        #expect(Set(metricEvents.map(\.kind)) == ["Runtime", "Performance"])
        #expect(metricEvents.allSatisfy { $0.eventId.count == 64 && $0.eventId.allSatisfy(\.isHexDigit) })
        #expect(events.count == 14)
        #expect(Set(events.map(\.deviceId)) == ["dev-k"])
        #expect(Set(events.map(\.installationId)) == ["inst-k"])

        // The crash went as CLIENT_CRASH_BATCH_UPLOAD.
        let crashes = try await stack.ingest.current.crashes(app: "shop")
        #expect(crashes.map(\.crashId) == ["c-77"])
        #expect(crashes.first?.json.contains(#""exceptionType":"SIGABRT""#) == true)

        // Redaction happened before the outbox: no query string, no credential upstream.
        let network = try #require(events.first { $0.eventId == trace + "eee19b7ec3c1b174" })
        #expect(network.json.contains(#""url.full":"https://api.example.com/v1/items""#))
        #expect(!network.json.contains("token=abc"))
        #expect(!network.json.contains("s3cr3t"))

        // The identity the ingest bound the connection to (docs/mapping.md).
        let connections = try await stack.ingest.current.connectionHistory(app: "shop")
        #expect(!connections.isEmpty)
        for connection in connections {
            #expect(connection.deviceId == "dev-k")
            #expect(connection.installationId == "inst-k")
            #expect(connection.platform == "ios")
            #expect(connection.sdkVersion == "pulsekit/2.3.0")
            #expect(connection.packageName == "com.example.shop")
        }

        // Metric point ids are the series and times, not the batch: a re-export under another
        // batch id is absorbed by the ids upstream.
        #expect(try await stack.post(metrics, path: "/v1/metrics", batchID: "kinds-metrics-again").status == 200)
        #expect(await eventually { stack.gateway.outboxBatches == 0 })
        #expect(
            await eventually { (try? stack.ingest.current.statistics().apps["shop"]?.duplicateEvents) == 2 })
        #expect(try await stack.ingest.current.counts(app: "shop").events == 14)
        await stack.stop()
    }
}
