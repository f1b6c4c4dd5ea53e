import Foundation
import PulseGateway
import PulseTestSupport
import Testing

/// `dedupRetentionDays` outside 7...3650 is refused by the real `pulsegate serve`: at start (the
/// process exits) and on a SIGHUP reload (the previous settings stay, the error is logged). The
/// Apsio contract requires remembering batch ids for at least the queue's maximum age, 7 days.
@Suite(.serialized) struct RetentionConfigurationTests {
    static let problem = "dedupRetentionDays must be 7 to 3650"

    @Test(arguments: [6, 0, -1, 3651])
    func aRetentionOutsideTheContractIsRefusedAtStart(days: Int) async throws {
        try await withPulsegate("retention-start") { executable, root in
            let config = root.path + "/gateway.json"
            try writeFile(#"{"dedupRetentionDays":\#(days)}"#, to: config)
            let error = await #expect(throws: TestClientError.self) {
                // Nothing listens on the upstream: the process must not get as far as using it.
                let gateway = try await GatewayProcess.start(
                    executable: executable, dataDirectory: root.path + "/gateway",
                    upstream: UpstreamAddress(host: "127.0.0.1", port: 9), config: config)
                await gateway.terminate()
            }
            #expect(error?.description.contains(Self.problem) == true, "\(String(describing: error))")
        }
    }

    @Test func aReloadBelowSevenDaysKeepsThePreviousSettingsAndLogsWhy() async throws {
        try await withPulsegate("retention-reload") { executable, root in
            let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
            let config = root.path + "/gateway.json"
            try writeFile(#"{"dedupRetentionDays":7,"logLevel":"info"}"#, to: config)
            let gateway = try await GatewayProcess.start(
                executable: executable, dataDirectory: root.path + "/gateway", upstream: ingest.address, config: config)
            defer { if gateway.process.isRunning { kill(gateway.process.processIdentifier, SIGKILL) } }
            let logs = gateway.logs
            let first = Payload.logs(records: [Payload.uidRecord("retention-1")])
            #expect(try await GatewayHTTP.post(port: gateway.port, first, batchID: "retention-1").status == 200)

            // 6 days (and a log level that would show if the file were applied): refused.
            try writeFile(#"{"dedupRetentionDays":6,"logLevel":"debug"}"#, to: config)
            kill(gateway.process.processIdentifier, SIGHUP)
            let refused = await eventually(within: .seconds(30)) {
                logs.all.contains { $0.contains("config reload failed") }
            }
            #expect(refused)
            let line = logs.all.first { $0.contains("config reload failed") }
            #expect(line?.contains(Self.problem) == true, "\(line ?? "no line")")
            #expect(line?.contains(#""level":"error""#) == true)
            #expect(!logs.all.contains { $0.contains("configuration reloaded") })
            // Still running with the previous settings: the request is answered and, at info level,
            // not logged; a replay is still a duplicate.
            let replay = try await GatewayHTTP.post(port: gateway.port, first, batchID: "retention-1")
            #expect(replay.status == 200)
            #expect(replay.header("Apsio-Duplicate") == "true")
            #expect(!logs.all.contains { $0.contains(#""msg":"request""#) })

            // A valid file still reloads.
            try writeFile(#"{"dedupRetentionDays":8,"logLevel":"debug"}"#, to: config)
            kill(gateway.process.processIdentifier, SIGHUP)
            #expect(
                await eventually(within: .seconds(30)) { logs.all.contains { $0.contains("configuration reloaded") } })
            await gateway.terminate()
            #expect(gateway.process.terminationStatus == 0)
            await ingest.stop()
        }
    }
}
