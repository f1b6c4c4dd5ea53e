import Foundation
import PulseGateway
import PulseTestSupport
import Testing

/// Per-app limits (`appLimits`) in the real `pulsegate serve`: one app floods and is refused with
/// 429 and `Retry-After` while another keeps getting 200; a reload changes the limits; `/metrics`
/// shows them by app. The upstream is a closed port, so the outbox only grows.
@Suite(.serialized) struct AppLimitsEndToEndTests {
    /// Posts one distinct log batch for `app`.
    static func post(_ port: Int, app: String, _ id: String) async throws -> RawHTTPResponse {
        try await GatewayHTTP.post(port: port, Payload.logs(records: [Payload.uidRecord(id)]), app: app, batchID: id)
    }

    @Test func aFloodingAppGetsItsOwn429WhileTheOtherKeepsGetting200() async throws {
        try await withPulsegate("app-limits") { executable, root in
            let config = root.path + "/gateway.json"
            try writeFile(
                #"{"retryAfterSeconds": 4, "appLimits": {"default": {"outboxBatches": 1000}, "apps": {"flood": {"outboxBatches": 5}}}}"#,
                to: config)
            let gateway = try await GatewayProcess.start(
                executable: executable, dataDirectory: root.path + "/gateway",
                upstream: UpstreamAddress(host: "127.0.0.1", port: try unusedLoopbackPort()), config: config)
            let port = gateway.port

            // 40 concurrent flood requests and, at the same time, 20 of the calm app one after another.
            async let flood: [Int] = withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<40 {
                    group.addTask { try await Self.post(port, app: "flood", "flood-\(index)").status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            var calm: [Int] = []
            for index in 0..<20 { calm.append(try await Self.post(port, app: "calm", "calm-\(index)").status) }
            let flooded = try await flood
            #expect(calm == Array(repeating: 200, count: 20))
            // Requests in flight count against the share: exactly 5 (one batch each) get in.
            #expect(flooded.filter { $0 == 200 }.count == 5, "\(flooded)")
            #expect(flooded.filter { $0 == 429 }.count == 40 - flooded.filter { $0 == 200 }.count, "\(flooded)")

            let refused = try await Self.post(port, app: "flood", "flood-late")
            #expect(refused.status == 429)
            #expect(refused.header("Retry-After") == "4")
            #expect(refused.bodyText.contains(#""code":8"#) && refused.bodyText.contains("flood"))
            #expect(try await Self.post(port, app: "calm", "calm-late").status == 200)

            let accepted = Double(flooded.filter { $0 == 200 }.count)
            #expect(try await GatewayHTTP.metric(port: port, #"pulsegate_app_outbox_batches{app="flood"}"#) == accepted)
            // "calm" is named nowhere in the config: its series is the bounded "other".
            #expect(try await GatewayHTTP.metric(port: port, #"pulsegate_app_outbox_batches{app="other"}"#) == 21)
            let limited = try await GatewayHTTP.metric(
                port: port, #"pulsegate_app_limited_total{app="flood",reason="outbox_batches"}"#)
            #expect(limited == 41 - accepted)

            // A reload raises the flood's share: it is accepted again.
            try writeFile(
                #"{"retryAfterSeconds": 4, "appLimits": {"apps": {"flood": {"outboxBatches": 100}}}}"#, to: config)
            kill(gateway.servePID, SIGHUP)
            let logs = gateway.logs
            #expect(await eventually { logs.all.contains { $0.contains("configuration reloaded") } })
            #expect(try await Self.post(port, app: "flood", "flood-after-reload").status == 200)

            // A reload is checked like a start, restart-only keys included: every problem is logged
            // and the previous limits stay.
            try writeFile(
                #"{"appLimits": {"apps": {"flood": {"outboxBatches": 1, "burst": 2}}}, "forwarding": {"forwardWindow": 100}}"#,
                to: config)
            kill(gateway.servePID, SIGHUP)
            #expect(await eventually { logs.all.contains { $0.contains("config reload failed") } })
            let failure = logs.all.first { $0.contains("config reload failed") } ?? ""
            #expect(
                failure.contains("appLimits.apps.flood.burst") && failure.contains("forwarding.forwardWindow"),
                "\(failure)"
            )
            #expect(try await Self.post(port, app: "flood", "flood-after-bad-reload").status == 200)

            // After a restart the per-app counts are recounted from the database.
            await gateway.terminate()
            try writeFile(
                #"{"retryAfterSeconds": 4, "appLimits": {"apps": {"flood": {"outboxBatches": 100}}}}"#, to: config)
            let restarted = try await GatewayProcess.start(
                executable: executable, dataDirectory: root.path + "/gateway",
                upstream: UpstreamAddress(host: "127.0.0.1", port: try unusedLoopbackPort()), config: config)
            #expect(
                try await GatewayHTTP.metric(port: restarted.port, #"pulsegate_app_outbox_batches{app="flood"}"#)
                    == accepted + 2)
            #expect(
                try await GatewayHTTP.metric(port: restarted.port, #"pulsegate_app_outbox_batches{app="other"}"#) == 21)
            await restarted.terminate()
        }
    }

    @Test func aRequestRateLimitsOneAppAndSaysWhenToRetry() async throws {
        try await withPulsegate("app-rate") { executable, root in
            let config = root.path + "/gateway.json"
            // One request per 1,000 seconds after a burst of 3: the test needs no clock.
            try writeFile(
                #"{"allowedAppIds": ["slow", "open"], "appLimits": {"apps": {"slow": {"requestsPerSecond": 0.001, "burst": 3}}}}"#,
                to: config)
            let gateway = try await GatewayProcess.start(
                executable: executable, dataDirectory: root.path + "/gateway",
                upstream: UpstreamAddress(host: "127.0.0.1", port: try unusedLoopbackPort()), config: config)
            let port = gateway.port
            var statuses: [Int] = []
            for index in 0..<6 { statuses.append(try await Self.post(port, app: "slow", "slow-\(index)").status) }
            #expect(statuses == [200, 200, 200, 429, 429, 429])
            let refused = try await Self.post(port, app: "slow", "slow-more")
            #expect(refused.status == 429)
            let retryAfter = Int(refused.header("Retry-After") ?? "") ?? 0
            #expect((900...1000).contains(retryAfter), "\(retryAfter)")
            for index in 0..<10 { #expect(try await Self.post(port, app: "open", "open-\(index)").status == 200) }
            #expect(
                try await GatewayHTTP.metric(port: port, #"pulsegate_app_limited_total{app="slow",reason="rate"}"#) == 4
            )
            // An app the config does not name is not a series of its own.
            #expect(try await Self.post(port, app: "stranger", "x").status == 403)
            let metrics = try await GatewayHTTP.request(port: port, "GET", "/metrics", headers: []).bodyText
            #expect(!metrics.contains(#"app="stranger""#))
            await gateway.terminate()
        }
    }
}
