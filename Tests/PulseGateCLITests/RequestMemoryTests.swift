import Foundation
import PulseGateway
import PulseTestSupport
import Testing

/// The request-memory budget of the real `pulsegate serve` process: large bodies in parallel stay
/// within the budget (plus a fixed allowance for everything else), and the memory goes back to the
/// system afterwards.
@Suite(.serialized) struct RequestMemoryTests {
    static let budget = 512 << 20
    static let allowance = 128 << 20
    static let bodyBytes = 14 << 20

    /// `VmHWM` (peak) and `VmRSS` (now) of a process, in bytes.
    static func memory(of pid: Int32) throws -> (peak: Int, resident: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return -1 }
            return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1) * 1024
        }
        return (field("VmHWM"), field("VmRSS"))
    }

    /// A ~14 MiB OTLP/JSON logs request: many records, each with a 1 KiB and a 300-byte attribute.
    static func jsonBody(_ tag: String) -> [UInt8] {
        let big = String(repeating: "x", count: 1024)
        let medium = String(repeating: "y", count: 300)
        var records: [UInt8] = []
        records.reserveCapacity(bodyBytes + 4096)
        var index = 0
        while records.count < bodyBytes {
            if index > 0 { records.append(UInt8(ascii: ",")) }
            let record = Payload.record(
                1_700_000_000,
                attributes: [
                    Payload.string("log.record.uid", "\(tag).\(index)"), Payload.string("blob", big),
                    Payload.string("detail", medium),
                ], extra: #","body":{"stringValue":"record \#(index)"}"#)
            records += record.utf8
            index += 1
        }
        let resource = Payload.iosResource(device: "mem-\(tag)", installation: "mem-inst-\(tag)")
        let envelope = Payload.logs(resource: resource, records: ["RECORDS"])
        let parts = envelope.components(separatedBy: "RECORDS")
        return Array(parts[0].utf8) + records + Array(parts[1].utf8)
    }

    /// The same shape as ``jsonBody(_:)`` as an OTLP protobuf `ExportLogsServiceRequest`.
    /// A logs body of `records` records, each carrying `blob` and the record uid `<uid>.<index>`.
    static func blobLogs(records: Int, blob: String, uid: String) -> [UInt8] {
        let blob = Payload.string("blob", blob)
        return Array(
            Payload.logs(
                records: (0..<records).map {
                    Payload.record(1_700_000_000, attributes: [blob, Payload.string("log.record.uid", "\(uid).\($0)")])
                }
            ).utf8)
    }

    static func protobufBody(_ tag: String) -> [UInt8] {
        func attribute(_ wire: inout Wire, _ field: UInt32, _ key: String, _ value: String) {
            wire.field(field) { pair in
                pair.field(1, key)
                pair.field(2) { $0.field(1, value) }
            }
        }
        let big = String(repeating: "x", count: 1024)
        let medium = String(repeating: "y", count: 300)
        var scope = Wire()
        scope.field(1) { $0.field(1, "ShopKit") }
        var index = 0
        while scope.bytes.count < bodyBytes {
            scope.field(2) { record in
                record.fixed64Field(1, 1_700_000_000_000_000_000)
                record.field(5) { $0.field(1, "record \(index)") }
                attribute(&record, 6, "log.record.uid", "\(tag).\(index)")
                attribute(&record, 6, "blob", big)
                attribute(&record, 6, "detail", medium)
            }
            index += 1
        }
        return Wire { request in
            request.field(1) { resourceLogs in
                resourceLogs.field(1) { resource in
                    for (key, value) in [
                        ("device.id", "mem-\(tag)"), ("app.installation.id", "mem-inst-\(tag)"),
                        ("service.version", "2.4.1"), ("os.name", "iOS"), ("telemetry.sdk.name", "pulsekit"),
                    ] {
                        attribute(&resource, 1, key, value)
                    }
                }
                resourceLogs.field(2, scope.bytes)
            }
        }.bytes
    }

    /// Posts `body`, retrying a 503 (which must carry `Retry-After`) until it is accepted; returns the
    /// final status and how many 503s came first.
    static func postUntilAccepted(port: Int, body: [UInt8], contentType: String) async throws -> (Int, Int) {
        var refused = 0
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let response = try await GatewayHTTP.request(
                port: port, "POST", "/v1/logs", body: body,
                headers: [("Content-Type", contentType), ("Apsio-App-Id", "shop")])
            guard response.status == 503, ContinuousClock.now < deadline else { return (response.status, refused) }
            #expect(response.header("Retry-After") != nil)
            refused += 1
            // A sleep: the client's pause before retrying a 503, as a real client's back-off.
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test func eightParallelLargeBodiesStayWithinTheBudgetAndTheMemoryGoesBack() async throws {
        try await withPulsegate("memory") { executable, root in
            let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
            let config = root.path + "/gateway.json"
            try Data(#"{"requestMemoryBudgetBytes":\#(Self.budget),"retryAfterSeconds":1}"#.utf8)
                .write(to: URL(fileURLWithPath: config))
            let gateway = try await GatewayProcess.start(
                executable: executable, dataDirectory: root.path + "/gateway", upstream: ingest.address, config: config)
            defer { if gateway.process.isRunning { kill(gateway.process.processIdentifier, SIGKILL) } }
            let pid = gateway.process.processIdentifier
            let port = gateway.port

            let kinds: [(String, String, @Sendable (String) -> [UInt8])] = [
                ("json", "application/json", Self.jsonBody), ("protobuf", "application/x-protobuf", Self.protobufBody),
            ]
            for (kind, contentType, make) in kinds {
                let bodies = (0..<8).map { make("\(kind)-\($0)") }
                #expect(bodies.allSatisfy { $0.count >= Self.bodyBytes && $0.count < 15 << 20 })
                let outcomes = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    for body in bodies {
                        group.addTask {
                            try await Self.postUntilAccepted(port: port, body: body, contentType: contentType)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(outcomes.map(\.0) == Array(repeating: 200, count: 8), "\(kind): \(outcomes)")
                let peak = try Self.memory(of: pid).peak
                #expect(peak > 0 && peak <= Self.budget + Self.allowance, "\(kind): VmHWM \(peak >> 20) MiB")
                let returned = await eventually(within: .seconds(10)) {
                    ((try? Self.memory(of: pid).resident) ?? .max) < Self.allowance
                }
                let resident = try Self.memory(of: pid).resident
                #expect(returned, "\(kind): VmRSS still \(resident >> 20) MiB after 10 s")
            }

            #expect(
                try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_budget_bytes") == Double(Self.budget)
            )
            #expect(try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_reserved_bytes") == 0)
            await gateway.terminate()
            await ingest.stop()
        }
    }

    @Test func aRequestOverTheBudgetWaitsThenGets503AndNothingAcceptedIsLost() async throws {
        let root = try ScratchDirectory("memory-budget")
        defer { root.remove() }
        let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
        let budget = 1 << 20
        let gateway = try await GatewayApp.start(
            GatewayConfiguration(
                dataDirectory: root.path + "/gateway", listenPort: 0, upstream: ingest.address,
                policy: GatewayPolicy(retryAfterSeconds: 3), requestMemoryBudgetBytes: budget,
                shutdownGracePeriod: .seconds(2)))
        let port = gateway.httpPort

        // A: a 200 KiB batch whose estimate (several times its size) takes the whole budget; its
        // client sends half the body and stalls.
        let large = Self.blobLogs(records: 10, blob: String(repeating: "s", count: 20_000), uid: "held")
        let stalled = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
        defer { stalled.close() }
        try stalled.send(
            "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
                + "Content-Length: \(large.count)\r\n\r\n")
        try stalled.send(Array(large[..<(large.count / 2)]))
        #expect(
            try await eventually(within: .seconds(20)) {
                try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_reserved_bytes") == Double(budget)
            })
        #expect(try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_budget_bytes") == Double(budget))

        // B: a small batch finds no room, waits, and is refused with 503 and Retry-After.
        let small = Payload.logs(records: [Payload.uidRecord("refused-then-accepted")])
        let started = ContinuousClock.now
        let refused = try await GatewayHTTP.post(port: port, small, batchID: "small-1")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "3")
        #expect(refused.header("Connection")?.lowercased() == "close")
        #expect(ContinuousClock.now - started >= .milliseconds(900))  // It waited for room first.

        // A completes and is accepted; then B's retry is accepted too, and both are delivered.
        try stalled.send(Array(large[(large.count / 2)...]))
        let held = try await onThread { try stalled.readResponse() }
        #expect(held.status == 200, "\(held.bodyText)")
        let retried = try await GatewayHTTP.post(port: port, small, batchID: "small-1")
        #expect(retried.status == 200)
        #expect(retried.header("Apsio-Duplicate") == nil)
        let expected = Set((0..<10).map { "held.\($0)" } + ["refused-then-accepted"])
        #expect(
            await eventually(within: .seconds(30)) {
                expected.isSubset(of: Set((try? await ingest.eventIDs(app: "shop")) ?? []))
            })
        #expect(
            try await eventually(within: .seconds(10)) {
                try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_reserved_bytes") == 0
            })
        await gateway.shutdown()
        await ingest.stop()
    }

    @Test func aDecodedBodyThatNoLongerFitsTheBudgetGets503WithItsStatus() async throws {
        let root = try ScratchDirectory("memory-decoded")
        defer { root.remove() }
        let budget = 1 << 20
        let gateway = try await GatewayApp.start(
            GatewayConfiguration(
                dataDirectory: root.path + "/gateway", listenPort: 0,
                policy: GatewayPolicy(retryAfterSeconds: 2), requestMemoryBudgetBytes: budget,
                shutdownGracePeriod: .seconds(2)))
        let port = gateway.httpPort

        // A stalled 100 KiB JSON upload holds 7 × 100 KiB of the 1 MiB.
        let stalled = try RawHTTPConnection(port: port, receiveTimeoutSeconds: 30)
        defer { stalled.close() }
        try stalled.send(
            "POST /v1/logs HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nApsio-App-Id: shop\r\n"
                + "Content-Length: \(100 << 10)\r\n\r\n")
        #expect(
            try await eventually(within: .seconds(20)) {
                try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_reserved_bytes")
                    == Double(7 * (100 << 10))
            })

        // A gzip body: a few KiB on the wire fit, its 200 KiB decoded (7 × that) do not.
        let json = Self.blobLogs(records: 4, blob: String(repeating: "z", count: 50_000), uid: "gz")
        let gzip = Compression.deflate(json, format: .gzip)
        #expect(gzip.count < 16 << 10 && json.count > 200_000)
        let refused = try await GatewayHTTP.request(
            port: port, "POST", "/v1/logs", body: gzip,
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("Apsio-App-Id", "shop")])
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "2")
        #expect(refused.bodyText.hasPrefix(#"{"code":14,"message":"the gateway is busy"#), "\(refused.bodyText)")
        #expect(gateway.outboxBatches == 0)

        // With the stalled upload gone, the same body is accepted.
        stalled.close()
        #expect(
            try await eventually(within: .seconds(20)) {
                try await GatewayHTTP.metric(port: port, "pulsegate_request_memory_reserved_bytes") == 0
            })
        let accepted = try await GatewayHTTP.request(
            port: port, "POST", "/v1/logs", body: gzip,
            headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("Apsio-App-Id", "shop")])
        #expect(accepted.status == 200, "\(accepted.bodyText)")
        await gateway.shutdown()
    }
}
