public import PulseKit
import PulseProtocol
import PulseStorage

extension Uploader {
    /// The settings that persist the applied remote policy.
    static let policyRevisionSetting = "policy_revision"
    static let policySnapshotSetting = "policy_snapshot"
    static let policyErrorSetting = "policy_error"

    /// The capabilities this build has (the default of ``UploaderConfiguration/capabilities``).
    public static var supportedCapabilities: Set<String> { RemotePolicy.capabilities }

    /// The revision of the remote policy applied (0 when none has been), persisted in the queue.
    public var appliedPolicyRevision: Int64 { remote.read().applied }

    /// Fetches the app's policy from the gateway (`GET <endpoint>/v1/policy` with `Apsio-App-Id` and
    /// `If-None-Match` of the applied revision) and applies a newer one atomically.
    ///
    /// All or nothing: a snapshot whose `requiredCapabilities` name a capability this uploader lacks
    /// (``UploaderConfiguration/capabilities``), or whose values are out of range, is refused — reported in
    /// ``UploaderStatus/policyError`` and the error log, the previous policy stays. Otherwise the mapped
    /// ``UploadPolicy`` (see `docs/policy.md`) and the revision are applied in one transaction: kill switch on
    /// purges the queue and refuses records; off resumes collection; lower caps drop at once; a 401/403 hold
    /// is released; the new diagnostics level, sampling and collected kinds apply from the next call on.
    ///
    /// Called by the foreground loop at start and every ``UploaderConfiguration/policyRefreshIntervalMilliseconds``,
    /// after uploads whose response announced a newer `Apsio-Policy-Revision`, and when the gateway answers
    /// 401 or 403.
    ///
    /// - Throws: ``UploaderError/Code/storage`` when the queue cannot be updated.
    @discardableResult
    public func refreshPolicy() async throws(UploaderError) -> PolicyRefresh {
        let known = remote.read()
        let now = clock.nowMilliseconds()
        remote.update { $0.lastFetch = now }
        var headers: [(name: String, value: String)] = [("Apsio-App-Id", appId), ("Accept", "application/json")]
        if known.applied > 0 {
            headers.append(("If-None-Match", "\"\(known.applied)\""))
        }
        let response: UploadResponse
        do {
            response = try await transport.send(
                UploadRequest(method: "GET", url: endpoint + "/v1/policy", headers: headers, body: []))
        } catch {
            return .unavailable(status: nil)
        }
        remote.advertise(response.headers["apsio-policy-revision"])
        switch response.status {
        case 304:
            return .unchanged(revision: known.applied)
        case 200:
            break
        default:
            return .unavailable(status: response.status)
        }
        let snapshot: ConfigSnapshot
        do {
            snapshot = try ConfigSnapshot(decodingJSON: response.body)
        } catch {
            let revision = Int64(response.headers["apsio-policy-revision"] ?? "") ?? 0
            return try await refuse(revision: revision, reason: "the policy snapshot is malformed: \(error.message)")
        }
        if snapshot.revision <= known.applied {
            return .unchanged(revision: known.applied)
        }
        let missing = RemotePolicy.missingCapabilities(snapshot, capabilities: remote.capabilities)
        if !missing.isEmpty {
            return try await refuse(
                revision: snapshot.revision,
                reason: "policy revision \(snapshot.revision) requires capabilities this uploader lacks: "
                    + missing.joined(separator: ", "))
        }
        let policy: UploadPolicy
        do {
            policy = try RemotePolicy.uploadPolicy(snapshot, base: known.base, explicit: remote.explicit)
        } catch {
            return try await refuse(
                revision: snapshot.revision, reason: "policy revision \(snapshot.revision) is invalid: \(error.message)"
            )
        }
        let json = String(decoding: snapshot.encodeJSON(), as: UTF8.self)
        try await applyPolicy(policy) { connection in
            try QueueSettings.set(connection, Uploader.policyRevisionSetting, snapshot.revision)
            try QueueSettings.set(connection, Uploader.policySnapshotSetting, json)
            try QueueSettings.set(connection, Uploader.policyErrorSetting, nil)
        }
        remote.update { $0.applied = snapshot.revision }
        return .applied(revision: snapshot.revision)
    }

    /// Fetches when an upload response announced a newer revision or the periodic refresh is due; never
    /// throws (a failure is retried at the next opportunity).
    func refreshPolicyIfDue(force: Bool = false) async {
        let values = remote.read()
        let now = clock.nowMilliseconds()
        let periodic = values.lastFetch.map { now - $0 >= remote.refreshIntervalMilliseconds || now < $0 } ?? true
        guard force || remote.newerAdvertised || (remote.refreshIntervalMilliseconds > 0 && periodic) else { return }
        _ = try? await refreshPolicy()
    }

    private func refuse(revision: Int64, reason: String) async throws(UploaderError) -> PolicyRefresh {
        let now = clock.nowMilliseconds()
        do {
            try await executor.write { connection in
                try QueueSettings.set(connection, Uploader.policyErrorSetting, reason)
                try QueueStore.logError(connection, now: now, batchId: nil, status: nil, message: reason)
            }
        } catch {
            throw UploaderError.storage(error, "recording a refused policy failed")
        }
        remote.update { $0.rejected = max($0.rejected, revision) }
        return .rejected(revision: revision, reason: reason)
    }

    /// Whether the policy lets `record` in: ``UploaderError/Code/collectionStopped`` when its Pulse kind is not
    /// collected or it was sampled out.
    func admit(_ record: TelemetryRecord, policy: UploadPolicy) throws(UploaderError) {
        let kind = record.pulseKind
        if !policy.collectKinds.isEmpty && !policy.collectKinds.contains(kind) {
            throw UploaderError(.collectionStopped, "the policy does not collect \(kind.rawValue) records")
        }
        if let rate = policy.sampling[kind], rate < 1 {
            let draw = Double(random.nextUInt64() >> 11) * 0x1p-53
            if draw >= rate {
                throw UploaderError(
                    .collectionStopped, "the record was sampled out (\(kind.rawValue) is sampled at \(rate))")
            }
        }
    }

    /// The policy persisted by an earlier ``refreshPolicy()``, laid over `base`.
    static func persistedPolicy(_ json: String?, base: UploadPolicy, explicit: Set<UploadPolicy.Field>)
        -> UploadPolicy?
    {
        guard let json, let snapshot = try? ConfigSnapshot(decodingJSON: Array(json.utf8)) else { return nil }
        return try? RemotePolicy.uploadPolicy(snapshot, base: base, explicit: explicit)
    }
}
