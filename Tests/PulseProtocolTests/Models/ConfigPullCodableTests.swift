import PulseKit
import PulseProtocol
import Testing

@Suite struct ConfigPullCodableTests {
    static let snapshot = ConfigSnapshot(
        revision: 12, killSwitch: false, maxBatchAgeMs: 604_800_000, queueByteCap: 4_194_304, sealIntervalMs: 10_000,
        batchMaxEvents: 64, batchMaxBytes: 65_536, compression: .zlib, compressionMinBytes: 2_048,
        sampling: [.analytics: 0.25, .log: 0.0, .crash: 1.0], diagnosticsLevel: .callDetails,
        collectKinds: [.analytics, .crash, .log], requiredCapabilities: ["batch_upload"],
        endpoints: [ConfigEndpoint(name: "ingest", url: "tcp://127.0.0.1:6000")])

    @Test func snapshotRoundTrips() throws {
        #expect(try codableRoundTrip(Self.snapshot) == Self.snapshot)
        #expect(try codableRoundTrip(ConfigSnapshot(revision: 1)) == ConfigSnapshot(revision: 1))
        let request = ConfigPullRequest(configRevision: 11, capabilities: ["batch_upload", "compression:zstd"])
        #expect(try fastRoundTrip(request) == request)
    }

    @Test func absentFieldsTakeContractDefaults() throws {
        let decoded = try codableDecode(ConfigSnapshot.self, #"{"revision":3,"unknown":true}"#)
        #expect(decoded == ConfigSnapshot(revision: 3))
        #expect(decoded.maxBatchAgeMs == 7 * 24 * 3_600_000)
        #expect(decoded.diagnosticsLevel == .batchSummaries)
        #expect(decoded.samplingRate(for: .network) == 1.0)
        #expect(decoded.collects(.breadcrumb))
        #expect(try fastDecode(ConfigPullRequest.self, "{}") == ConfigPullRequest())
    }

    @Test func invalidSnapshotsAreRejectedAsAWhole() {
        let cases = [
            #"{"revision":3,"sampling":{"Analytics":1.5}}"#,
            #"{"revision":3,"sampling":{"Analytics":-0.1}}"#,
            #"{"revision":3,"batchMaxEvents":0}"#,
            #"{"revision":-1}"#,
            #"{"revision":3,"diagnosticsLevel":"verbose"}"#,
            #"{"revision":3,"compression":"brotli"}"#,
            #"{"killSwitch":true}"#,
        ]
        for json in cases {
            #expect(throws: (any Error).self, "\(json)") { try codableDecode(ConfigSnapshot.self, json) }
        }
        do {
            _ = try codableDecode(ConfigSnapshot.self, #"{"revision":3,"sampling":{"Crashes":0.5}}"#)
            Issue.record("expected unknown kind")
        } catch let error as PulseProtocolError {
            #expect(error.code == .unknownEventKind)
            #expect(error.message.contains("\"Crashes\""))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func killSwitchStopsCollection() {
        var snapshot = Self.snapshot
        #expect(snapshot.collects(.crash))
        #expect(!snapshot.collects(.network))
        snapshot.killSwitch = true
        #expect(!snapshot.collects(.crash))
    }

    @Test func serverAnswerRules() {
        let snapshot = Self.snapshot
        #expect(
            ConfigPullRequest(configRevision: 13, capabilities: ["batch_upload"]).responseCode(serving: snapshot)
                == .conflict)
        #expect(
            ConfigPullRequest(configRevision: 12, capabilities: ["batch_upload"]).responseCode(serving: snapshot) == .ok
        )
        #expect(
            ConfigPullRequest(configRevision: 0, capabilities: ["batch_upload"]).responseCode(serving: snapshot) == .ok)
        #expect(ConfigPullRequest(configRevision: 0, capabilities: []).responseCode(serving: snapshot) == .forbidden)
    }
}
