import Foundation
import PulseGateway
import PulseTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The real `pulsegate serve` under libfaketime (Debian's `faketime`, installed by the test
/// command): rows that waited for the upstream before the wall clock stepped back an hour are sent
/// as soon as the upstream returns, not an hour later.
@Suite(.serialized) struct ClockStepProcessTests {
    static let faketime = "/usr/bin/faketime"

    @Test func rowsWaitingBeforeABackwardWallClockStepAreSentWhenTheUpstreamReturns() async throws {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.faketime),
            "\(Self.faketime) is missing: scripts/test installs Debian's faketime package")
        let root = try ScratchDirectory("clockstep")
        defer { root.remove() }
        let config = root.path + "/gateway.json"
        try Data(#"{"logLevel":"debug","forwarding":{"backoffBaseMs":500,"backoffMaxMs":3000}}"#.utf8).write(
            to: URL(fileURLWithPath: config))
        let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
        await ingest.stop()  // the upstream is down: rows wait with backoff
        let dataDirectory = root.path + "/gateway"

        // Real time: three batches accepted, retried for a while, the gateway stopped.
        let before = try await GatewayProcess.start(
            executable: executable, dataDirectory: dataDirectory, upstream: ingest.address, config: config)
        defer { if before.process.isRunning { kill(before.process.processIdentifier, SIGKILL) } }
        for batch in ["step-1", "step-2", "step-3"] {
            #expect(try await ProcessRobustnessTests.post(port: before.port, batch).status == 200)
        }
        let beforeLogs = before.logs
        #expect(await eventually { beforeLogs.all.filter { $0.contains("will retry") }.count >= 6 })
        await before.terminate()

        // An hour earlier by the wall clock (the monotonic clocks are left alone, as an NTP step
        // leaves them): the stored next-attempt times now lie an hour ahead.
        let stepped = try await GatewayProcess.start(
            executable: executable, dataDirectory: dataDirectory, upstream: ingest.address, config: config,
            launcher: [Self.faketime, "-f", "-1h"], environment: ["FAKETIME_DONT_FAKE_MONOTONIC": "1"])
        defer {
            // The launcher lives as long as the gateway: once it exited, the pid may be reused.
            if stepped.process.isRunning {
                kill(stepped.servePID, SIGKILL)
                kill(stepped.process.processIdentifier, SIGKILL)
            }
        }
        let logs = stepped.logs
        // It retries against the closed port once more, then the upstream returns.
        #expect(await eventually { logs.all.contains { $0.contains("will retry") } })
        let listening = try #require(logs.all.first { $0.contains("gateway listening") })
        #expect(!listening.contains(Self.hourString(offset: 0)), "the wall clock was not stepped: \(listening)")
        try await ingest.restart()
        let delivered = await eventually(within: .seconds(20)) {
            (try? await ingest.eventIDs(app: "shop").sorted()) == ["step-1", "step-2", "step-3"]
        }
        #expect(delivered, "rows were not delivered after the step: \(logs.all.suffix(5))")
        await stepped.terminate()
        #expect(stepped.process.terminationStatus == 0)
        await ingest.stop()
    }

    /// `"ts":"YYYY-MM-DDTHH` of the real clock `offset` hours from now (UTC), as log lines write it.
    static func hourString(offset: Int) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH"
        return #""ts":""# + formatter.string(from: Date(timeIntervalSinceNow: Double(offset) * 3600))
    }
}
