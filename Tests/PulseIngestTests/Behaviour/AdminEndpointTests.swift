import Foundation
import MsgTrans
import PulseProtocol
import Testing

@testable import PulseIngest

@Suite struct AdminEndpointTests {
    /// An ingest with its admin API and one connected client that has sent `requests`, each
    /// answered: the harness, the admin port, the client and its connection id. The test keeps the
    /// client (its connection closes when the client goes).
    static func start(
        sending requests: [(biz: UInt8, json: String)] = []
    ) async throws -> (harness: Harness, port: Int, client: RawClient, connectionId: String) {
        let harness = try await Harness.start(admin: true)
        let port = try #require(harness.server.adminPort)
        let (client, connectionId) = try await harness.connectedClient()
        for request in requests {
            _ = try #require(await client.request(biz: request.biz, json: request.json))
        }
        return (harness, port, client, connectionId)
    }

    @Test func statsReportConnectionsPresenceBatchesEventsAndCrashes() async throws {
        let (harness, port, client, _) = try await Self.start(sending: [
            (Biz.eventBatch, Fixture.eventBatch(batchId: "s", eventIds: [Fixture.hexID(1), Fixture.hexID(2)])),
            (Biz.crashBatch, Fixture.crashBatch(batchId: "c", crashIds: ["k"])),
            (99, "{}"),
        ])
        let reply = try #require(await HTTPProbe.send(port: port, path: "/stats"))
        #expect(reply.status == 200)
        let stats = reply.object
        #expect((stats["openConnections"] as? NSNumber)?.intValue == 1)
        #expect(((stats["rejections"] as? [String: Any])?["404"] as? NSNumber)?.intValue == 1)
        let app = try #require((stats["apps"] as? [String: Any])?[Fixture.appId] as? [String: Any])
        #expect((app["sessions"] as? NSNumber)?.intValue == 1)
        #expect((app["present"] as? NSNumber)?.intValue == 1)
        #expect((app["eventBatches"] as? NSNumber)?.intValue == 1)
        #expect((app["events"] as? NSNumber)?.intValue == 2)
        #expect((app["crashBatches"] as? NSNumber)?.intValue == 1)
        #expect((app["crashes"] as? NSNumber)?.intValue == 1)
        withExtendedLifetime(client) {}
        await harness.stop()
    }

    @Test func metricsExportTheStatisticsInThePrometheusFormat() async throws {
        let (harness, port, client, _) = try await Self.start(sending: [
            (Biz.eventBatch, Fixture.eventBatch(batchId: "m", eventIds: [Fixture.hexID(1), Fixture.hexID(2)])),
            (Biz.eventBatch, Fixture.eventBatch(batchId: "m", eventIds: [Fixture.hexID(1)])),
            (99, "{}"),
        ])
        let reply = try #require(await HTTPProbe.send(port: port, path: "/metrics"))
        #expect(reply.status == 200)
        let text = String(decoding: reply.body, as: UTF8.self)
        let samples = Dictionary(
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { line -> (String, String) in
                let space = line.lastIndex(of: " ")!
                return (String(line[..<space]), String(line[line.index(after: space)...]))
            }, uniquingKeysWith: { first, _ in first })
        let app = "{app=\"\(Fixture.appId)\"}"
        #expect(samples["pulsegate_ingest_open_connections"] == "1")
        #expect(samples["pulsegate_ingest_event_batches_total" + app] == "1")
        #expect(samples["pulsegate_ingest_events_total" + app] == "2")
        #expect(samples["pulsegate_ingest_duplicate_batches_total" + app] == "1")
        #expect(samples["pulsegate_ingest_sessions" + app] == "1")
        #expect(samples[#"pulsegate_ingest_rejections_total{code="404"}"#] == "1")
        #expect(samples[#"pulsegate_build_info{version="unknown",component="ingest"}"#] == "1")
        #expect(samples["process_open_fds"].flatMap(Int.init).map { $0 > 0 } == true)
        #expect(samples["process_resident_memory_bytes"].flatMap(Int.init).map { $0 > 0 } == true)
        #expect(text.contains("# TYPE pulsegate_ingest_events_total counter\n"))
        withExtendedLifetime(client) {}
        await harness.stop()
    }

    @Test func eventsCrashesAndConnectionsAreListed() async throws {
        let ids = (0..<5).map { Fixture.hexID(10 + $0) }
        let (harness, port, client, connectionId) = try await Self.start(sending: [
            (Biz.eventBatch, Fixture.eventBatch(batchId: "l", eventIds: ids)),
            (Biz.crashBatch, Fixture.crashBatch(batchId: "c", crashIds: ["k"])),
        ])

        let events = try #require(await HTTPProbe.send(port: port, path: "/events?app=\(Fixture.appId)&limit=3"))
        #expect(events.status == 200)
        let list = try #require(events.object["events"] as? [[String: Any]])
        #expect(list.count == 3)
        #expect(list.first?["eventId"] as? String == ids[4])
        #expect((list.first?["event"] as? [String: Any])?["kind"] as? String == "Analytics")

        let crashes = try #require(await HTTPProbe.send(port: port, path: "/crashes?app=\(Fixture.appId)"))
        #expect((crashes.object["crashes"] as? [[String: Any]])?.first?["crashId"] as? String == "k")
        let connections = try #require(await HTTPProbe.send(port: port, path: "/connections?app=\(Fixture.appId)"))
        #expect(
            (connections.object["connections"] as? [[String: Any]])?.first?["connectionId"] as? String == connectionId)

        #expect(await HTTPProbe.send(port: port, path: "/events")?.status == 400)
        #expect(await HTTPProbe.send(port: port, path: "/events?app=x&limit=zero")?.status == 400)
        #expect(await HTTPProbe.send(port: port, path: "/nope")?.status == 404)
        #expect(await HTTPProbe.send(port: port, method: "DELETE", path: "/stats")?.status == 405)
        withExtendedLifetime(client) {}
        await harness.stop()
    }

    @Test func postControlSendsARouteToConnectedClients() async throws {
        let (harness, port, client, connectionId) = try await Self.start()
        async let reply = HTTPProbe.send(
            port: port, method: "POST", path: "/control",
            body: #"{"app":"app_7f3a","route":"telemetry.flush","args":{"reason":"test"}}"#)
        let request = try #require(await client.readFrame())
        let body = try #require(JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any])
        #expect(body["route"] as? String == "telemetry.flush")
        #expect((body["args"] as? [String: Any])?["reason"] as? String == "test")
        await client.send(
            .response, biz: 7, json: #"{"code":0,"msg":null,"data":{"flushedBatches":1}}"#, messageID: request.messageID
        )
        let answer = try #require(await reply)
        #expect(answer.status == 200)
        #expect((answer.object["sent"] as? NSNumber)?.intValue == 1)
        let outcome = try #require((answer.object["outcomes"] as? [[String: Any]])?.first)
        #expect(outcome["connectionId"] as? String == connectionId)
        #expect((outcome["code"] as? NSNumber)?.intValue == 0)
        #expect(((outcome["data"] as? [String: Any])?["flushedBatches"] as? NSNumber)?.intValue == 1)

        let bad = await HTTPProbe.send(
            port: port, method: "POST", path: "/control", body: #"{"app":"a","route":"Bad"}"#)
        #expect(bad?.status == 400)
        let none = await HTTPProbe.send(
            port: port, method: "POST", path: "/control", body: #"{"app":"nobody","route":"config.invalidate"}"#)
        #expect(none?.status == 200)
        #expect((none?.object["sent"] as? NSNumber)?.intValue == 0)
        await harness.stop()
    }

    @Test func reloadRereadsTheConfigFileBumpsRevisionsAndKeepsThePolicyOnErrors() async throws {
        let file = NSTemporaryDirectory() + "pulse-ingest-reload-" + UUID().uuidString + ".json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        let config = #"{"apps":[{"appId":"shop","packages":["*"],"policy":{"revision":1,"diagnosticsLevel":"%@"}}]}"#
        try config.replacingOccurrences(of: "%@", with: "none").write(toFile: file, atomically: true, encoding: .utf8)
        let harness = try await Harness.start(policy: try IngestPolicy.load(path: file), admin: true) {
            $0.policyFile = file
        }
        let port = try #require(harness.server.adminPort)
        try config.replacingOccurrences(of: "%@", with: "callDetails").write(
            toFile: file, atomically: true, encoding: .utf8)
        let reloaded = try #require(await HTTPProbe.send(port: port, method: "POST", path: "/reload"))
        #expect(reloaded.status == 200)
        #expect(reloaded.object["changedApps"] as? [String] == ["shop"])
        #expect(harness.server.policy.app("shop")?.policy.revision == 2)
        #expect(harness.server.policy.app("shop")?.policy.diagnosticsLevel == .callDetails)

        try "{".write(toFile: file, atomically: true, encoding: .utf8)
        let broken = try #require(await HTTPProbe.send(port: port, method: "POST", path: "/reload"))
        #expect(broken.status == 400)
        #expect(harness.server.policy.app("shop")?.policy.revision == 2)
        #expect(await HTTPProbe.send(port: port, path: "/reload")?.status == 405)
        await harness.stop()

        let withoutFile = try await Harness.start(admin: true)
        let adminPort = try #require(withoutFile.server.adminPort)
        let none = try #require(await HTTPProbe.send(port: adminPort, method: "POST", path: "/reload"))
        #expect(none.status == 400)
        await withoutFile.stop()
    }
}
