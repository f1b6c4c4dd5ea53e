import PulseKit
import PulseProtocol
import Synchronization
import Testing

@testable import PulseUploader

/// A stand-in for the gateway's policy side: serves `GET /v1/policy` from a settable snapshot (with ETag and
/// 304) and answers uploads with a scripted status and the `Apsio-Policy-Revision` header.
final class PolicyServer: UploadTransport {
    struct State {
        var snapshot: String?
        var uploadStatus = 200
        var requests: [UploadRequest] = []
    }

    let state = Mutex(State())

    func serve(_ json: String) {
        state.withLock { $0.snapshot = json }
    }

    var requests: [UploadRequest] { state.withLock { $0.requests } }
    var policyRequests: [UploadRequest] { requests.filter { $0.method == "GET" } }

    func send(_ request: UploadRequest) async throws(UploaderError) -> UploadResponse {
        let (snapshot, uploadStatus) = state.withLock { state in
            state.requests.append(request)
            return (state.snapshot, state.uploadStatus)
        }
        let revision = snapshot.flatMap { try? ConfigSnapshot(decodingJSON: Array($0.utf8)).revision } ?? 0
        let headers = ["Apsio-Policy-Revision": String(revision)]
        guard request.method == "GET" else {
            return UploadResponse(status: uploadStatus, headers: headers, body: Array("{}".utf8))
        }
        #expect(request.url.hasSuffix("/v1/policy"))
        #expect(request.header("Apsio-App-Id") == "test-app")
        guard let snapshot else { return UploadResponse(status: 503, headers: ["Retry-After": "5"]) }
        if request.header("If-None-Match") == "\"\(revision)\"" {
            return UploadResponse(status: 304, headers: headers.merging(["ETag": "\"\(revision)\""]) { $1 })
        }
        return UploadResponse(status: 200, headers: headers, body: Array(snapshot.utf8))
    }
}

@Suite struct RemotePolicyTests {
    static func open(_ server: PolicyServer, fixture: UploaderFixture? = nil) async throws -> (
        Uploader, UploaderFixture
    ) {
        var fixture = try fixture ?? UploaderFixture()
        fixture.transport = server
        return (try await fixture.open(), fixture)
    }

    @Test func aNewerSnapshotIsMappedAppliedAndPersisted() async throws {
        let server = PolicyServer()
        server.serve(
            #"{"revision":2,"maxBatchAgeMs":3600000,"queueByteCap":1048576,"sealIntervalMs":5000,"batchMaxEvents":10,"batchMaxBytes":32768,"sampling":{"Network":0.5},"diagnosticsLevel":"callDetails","collectKinds":["Analytics","Crash"],"requiredCapabilities":["batch_upload","kill_switch"]}"#
        )
        let (uploader, fixture) = try await Self.open(server)
        #expect(try await uploader.refreshPolicy() == .applied(revision: 2))
        let policy = uploader.policy
        #expect(policy.diagnosticsLevel == .callDetails)
        #expect(policy.maximumBatchAgeMilliseconds == 3_600_000)
        #expect(policy.maximumQueueBytes == 1_048_576)
        #expect(policy.sealIntervalMilliseconds == 5_000)
        #expect(policy.maximumBatchRecords == 10)
        #expect(policy.maximumBatchBytes == 32_768)
        #expect(policy.sampling == [.network: 0.5])
        #expect(policy.collectKinds == [.analytics, .crash])
        #expect(policy.maximumInFlight == UploadPolicy().maximumInFlight)  // not in the snapshot: kept
        #expect(try await uploader.status().policyRevision == 2)
        #expect(server.policyRequests.first?.header("If-None-Match") == nil)

        // The same revision again: If-None-Match, 304, nothing changes.
        #expect(try await uploader.refreshPolicy() == .unchanged(revision: 2))
        #expect(server.policyRequests.last?.header("If-None-Match") == "\"2\"")
        try await uploader.close()

        // A new process on the same queue keeps the applied policy.
        let reopened = try await fixture.open()
        #expect(reopened.appliedPolicyRevision == 2)
        #expect(reopened.policy.diagnosticsLevel == .callDetails)
        #expect(reopened.policy.collectKinds == [.analytics, .crash])
        try await reopened.close()
    }

    @Test func aSnapshotRequiringAMissingCapabilityIsRefusedAndReported() async throws {
        let server = PolicyServer()
        server.serve(#"{"revision":4,"killSwitch":true,"requiredCapabilities":["batch_upload","teleport"]}"#)
        let (uploader, _) = try await Self.open(server)
        try await uploader.record(.event(EventEntry(name: "kept")))
        let outcome = try await uploader.refreshPolicy()
        guard case .rejected(let revision, let reason) = outcome else {
            Issue.record("expected a rejection, got \(outcome)")
            return
        }
        #expect(revision == 4)
        #expect(reason.contains("teleport"))
        #expect(uploader.policy == UploadPolicy())
        #expect(uploader.appliedPolicyRevision == 0)
        let status = try await uploader.status()
        #expect(status.policyRevision == 0)
        #expect(status.policyError?.contains("teleport") == true)
        #expect(status.recentErrors.first?.message.contains("teleport") == true)
        #expect(!status.killSwitch)
        #expect(status.totalRecords == 1)  // the kill switch of the refused snapshot did nothing
        try await uploader.close()
    }

    @Test func aSnapshotWithOutOfRangeValuesChangesNothing() async throws {
        let server = PolicyServer()
        // batchMaxBytes below the uploader's 1 KiB minimum: the whole snapshot is refused, kill switch included.
        server.serve(#"{"revision":5,"killSwitch":true,"diagnosticsLevel":"none","batchMaxBytes":512}"#)
        let (uploader, _) = try await Self.open(server)
        try await uploader.record(.event(EventEntry(name: "kept")))
        guard case .rejected = try await uploader.refreshPolicy() else {
            Issue.record("expected a rejection")
            return
        }
        #expect(uploader.policy.diagnosticsLevel == .batchSummaries)
        let status = try await uploader.status()
        #expect(!status.killSwitch)
        #expect(status.totalRecords == 1)
        try await uploader.close()
    }

    @Test func theKillSwitchPurgesAndStopsCollectionAndClearingItResumes() async throws {
        let server = PolicyServer()
        let (uploader, _) = try await Self.open(server)
        try await uploader.record(.event(EventEntry(name: "a")))
        try await uploader.record(.log(LogEntry(body: "b")))
        server.serve(#"{"revision":6,"killSwitch":true}"#)
        #expect(try await uploader.refreshPolicy() == .applied(revision: 6))
        var status = try await uploader.status()
        #expect(status.killSwitch)
        #expect(status.totalRecords == 0)
        #expect(status.drops[.killSwitch]?.records == 2)
        await #expect(throws: UploaderError.self) { try await uploader.record(.event(EventEntry(name: "c"))) }
        server.serve(#"{"revision":7,"killSwitch":false}"#)
        #expect(try await uploader.refreshPolicy() == .applied(revision: 7))
        try await uploader.record(.event(EventEntry(name: "d")))
        status = try await uploader.status()
        #expect(!status.killSwitch)
        #expect(status.totalRecords == 1)
        try await uploader.close()
    }

    @Test func collectKindsAndSamplingDecideWhatRecordAccepts() async throws {
        var policy = UploadPolicy()
        policy.collectKinds = [.analytics, .crash, .network]
        policy.sampling = [.analytics: 0, .network: 0.5]
        var fixture = try UploaderFixture()
        fixture.policy = policy
        let (uploader, _) = try await Self.open(PolicyServer(), fixture: fixture)
        do {
            try await uploader.record(.log(LogEntry(body: "not collected")))
            Issue.record("a Log record was accepted")
        } catch {
            #expect(error.code == .collectionStopped)
            #expect(error.message.contains("does not collect Log"))
        }
        do {
            try await uploader.record(.event(EventEntry(name: "sampled at 0")))
            Issue.record("an Analytics record was accepted at rate 0")
        } catch {
            #expect(error.message.contains("sampled out"))
        }
        try await uploader.record(.crash(CrashReport(message: "always kept")))
        #expect(try await uploader.status().totalRecords == 1)
        try await uploader.close()

        // The sampling draw uses the injected random source: zero is the smallest draw (kept at 0.5),
        // all-ones the largest (sampled out).
        let span = TelemetryRecord.span(
            SpanEntry(
                name: "GET /", traceId: String(repeating: "ab", count: 16), spanId: "0123456789abcdef", kind: .client))
        var kept = fixture
        kept.randomOverride = RandomSource { 0 }
        let low = try await kept.open()
        try await low.record(span)
        try await low.close()
        var dropped = fixture
        dropped.randomOverride = RandomSource { UInt64.max }
        let high = try await dropped.open()
        await #expect(throws: UploaderError.self) { try await high.record(span) }
        try await high.close()
    }

    @Test func anUploadResponseAnnouncingANewerRevisionTriggersAFetch() async throws {
        let server = PolicyServer()
        server.serve(#"{"revision":9,"diagnosticsLevel":"callDetailsAndStackTraces"}"#)
        let (uploader, _) = try await Self.open(server)
        try await uploader.record(.event(EventEntry(name: "tap")))
        let report = try await uploader.flush()
        #expect(report.delivered == 1)
        #expect(uploader.appliedPolicyRevision == 9)
        #expect(uploader.policy.diagnosticsLevel == .callDetailsAndStackTraces)
        #expect(server.requests.map(\.method) == ["POST", "GET"])
        try await uploader.close()
    }

    @Test func a401TriggersAPolicyFetch() async throws {
        let server = PolicyServer()
        server.serve(#"{"revision":3}"#)
        server.state.withLock { $0.uploadStatus = 401 }
        let hooked = Mutex<[Int]>([])
        var fixture = try UploaderFixture()
        fixture.policyRefresh = { status in hooked.withLock { $0.append(status) } }
        let (uploader, _) = try await Self.open(server, fixture: fixture)
        try await uploader.record(.event(EventEntry(name: "tap")))
        _ = try await uploader.flush()
        // The 401 fetched the policy (applying it releases the hold, so the pass tries the batch again and
        // gets a second 401; that fetch finds the revision current).
        #expect(server.requests.map(\.method).prefix(2) == ["POST", "GET"])
        #expect(uploader.appliedPolicyRevision == 3)
        #expect(hooked.withLock { $0 }.first == 401)
        try await uploader.close()
    }
}
