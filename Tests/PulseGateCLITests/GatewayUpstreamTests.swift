import Foundation
import PulseIngest
import PulseTestSupport
import Testing

@testable import PulseGateCLI
@testable import PulseGateway

/// The gateway against the real ingest server going away and coming back, and refusing batches.
@Suite(.serialized) struct GatewayUpstreamTests {
    static func batch(_ uids: [String]) -> String {
        Payload.logs(records: uids.map { Payload.uidRecord($0) })
    }

    static func readiness(_ port: Int) async -> Int {
        (try? await GatewayHTTP.request(port: port, "GET", "/readyz", headers: []).status) ?? 0
    }

    @Test func outageFillsTheOutboxToItsCapAndItDrainsExactlyOnceWhenTheIngestReturns() async throws {
        let cap = 6
        let stack = try await GatewayStack.start(
            policy: GatewayPolicy(outboxMaxBatches: cap, retryAfterSeconds: 2),
            forwarding: ForwardingSettings(
                requestTimeout: .seconds(3), connectTimeout: .seconds(2), backoffBase: .milliseconds(50),
                backoffMax: .milliseconds(400)))
        defer { stack.root.remove() }
        let port = stack.port

        // The path works.
        #expect(try await stack.post(Self.batch(["up.0", "up.1"]), batchID: "up").status == 200)
        #expect(await stack.waitForDelivery(app: "shop", count: 2))

        // Outage: the gateway keeps accepting until the outbox holds `cap` batches, then answers 429.
        await stack.ingest.stop()
        var accepted: [String] = []
        var refused: RawHTTPResponse?
        for index in 0..<(cap + 4) {
            let batchID = "down-\(index)"
            let response = try await stack.post(Self.batch(["\(batchID).0", "\(batchID).1"]), batchID: batchID)
            if response.status == 429 {
                refused = response
                break
            }
            #expect(response.status == 200)
            accepted.append(batchID)
            if index == 0 {
                // Under the cap the gateway is ready although the upstream is gone.
                #expect(await Self.readiness(port) == 200)
            }
        }
        #expect(accepted.count == cap)
        let full = try #require(refused)
        #expect(full.header("Retry-After") == "2")
        #expect(full.bodyText == #"{"code":8,"message":"the outbox is full; retry later"}"#)
        // Upstream unreachable and the outbox at its cap: not ready.
        #expect(await eventually { await Self.readiness(port) == 503 })
        #expect(stack.gateway.outboxBatches == cap)
        let metrics = try await GatewayHTTP.request(port: port, "GET", "/metrics", headers: []).bodyText
        #expect(metrics.contains(#"pulsegate_http_requests_total{route="/v1/logs",code="429"} 1"#))

        // The ingest comes back on the same port and data directory: the outbox drains.
        let restarted = ContinuousClock.now
        try await stack.ingest.restart()
        #expect(await eventually(within: .seconds(30)) { stack.gateway.outboxBatches == 0 })
        let drain = ContinuousClock.now - restarted
        #expect(await eventually { await Self.readiness(port) == 200 })
        // The refused batch is accepted now.
        let retried = try await stack.post(Self.batch(["down-\(cap).0", "down-\(cap).1"]), batchID: "down-\(cap)")
        #expect(retried.status == 200)
        #expect(retried.header("Apsio-Duplicate") == nil)  // the 429 stored nothing

        let expected = Set(["up.0", "up.1"] + (0...cap).flatMap { ["down-\($0).0", "down-\($0).1"] })
        #expect(await stack.waitForDelivery(app: "shop", count: expected.count))
        let stored = try await stack.ingest.eventIDs(app: "shop")
        #expect(stored.count == expected.count)
        #expect(Set(stored) == expected)
        #expect(try await stack.ingest.current.counts(app: "shop").events == expected.count)
        let seconds = Double(drain.components.seconds) + Double(drain.components.attoseconds) / 1e18
        print(
            "gateway outage: \(cap) batches held during the outage drained \(String(format: "%.2f", seconds)) s after the ingest returned"
        )
        await stack.stop()
    }

    @Test func batchesTheIngestRefusesAreDeadLetteredListedAndRequeued() async throws {
        let shopOnly = try IngestPolicy(json: Array(#"{"apps":[{"appId":"shop","packages":["*"]}]}"#.utf8))
        let stack = try await GatewayStack.start(ingestPolicy: shopOnly)
        defer { stack.root.remove() }
        let directory = stack.dataDirectory

        // The ingest refuses the CONNECT of an app it does not know (403): the row is parked.
        #expect(try await stack.post(Self.batch(["dl.0", "dl.1"]), app: "blocked", batchID: "dl-1").status == 200)
        #expect(try await stack.post(Self.batch(["fine.0"]), batchID: "fine-1").status == 200)
        #expect(await eventually { (try? await stack.gateway.store.deadLetterCount()) == 1 })
        #expect(await stack.waitForDelivery(app: "shop", count: 1))
        #expect(try await GatewayHTTP.metric(port: stack.port, "pulsegate_dead_letters") == 1)

        // `pulsegate outbox` shows and lists it while the gateway runs.
        let status = CapturedOutput()
        #expect(
            await PulseGateCommandLine.run(
                arguments: ["outbox", "--data-dir", directory], environment: [:], output: status.output) == 0)
        let blockedRow = status.stdout.split(separator: "\n").first { $0.hasPrefix("blocked ") }
        // APP, BATCHES, RECORDS, BYTES, OLDEST AGE, DEAD LETTERS
        #expect(blockedRow?.split(separator: " ").map(String.init) == ["blocked", "0", "0", "0", "-", "1"])
        let letters = CapturedOutput()
        #expect(
            await PulseGateCommandLine.run(
                arguments: ["outbox", "dead-letters", "--data-dir", directory], environment: [:],
                output: letters.output) == 0)
        let rows = letters.stdout.split(separator: "\n")
        #expect(rows.count == 2)
        #expect(rows.first?.hasPrefix("SEQ ") == true)
        // SEQ, APP, KIND, RECORDS, ATTEMPTS, CODE, HTTP BATCH, PULSE BATCH, MESSAGE
        let columns = rows.last?.split(separator: " ").map(String.init) ?? []
        #expect(columns.count >= 8)
        #expect(Array(columns.dropFirst().prefix(6)) == ["blocked", "events", "2", "1", "403", "dl-1"])

        // The ingest learns the app; the operator requeues; the gateway delivers it.
        try stack.ingest.current.reload(
            IngestPolicy(
                json: Array(
                    #"{"apps":[{"appId":"shop","packages":["*"]},{"appId":"blocked","packages":["*"]}]}"#.utf8)))
        let requeue = CapturedOutput()
        #expect(
            await PulseGateCommandLine.run(
                arguments: ["outbox", "requeue", "--all", "--data-dir", directory], environment: [:],
                output: requeue.output) == 0)
        #expect(requeue.stdout == "requeued 1 batch\n")
        stack.gateway.pokeForwarder()
        #expect(await stack.waitForDelivery(app: "blocked", count: 2))
        #expect(Set(try await stack.ingest.eventIDs(app: "blocked")) == ["dl.0", "dl.1"])
        #expect(try await stack.gateway.store.deadLetterCount() == 0)
        await stack.stop()
    }
}
