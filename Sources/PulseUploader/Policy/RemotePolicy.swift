import PulseProtocol

/// Maps the gateway's policy snapshot (`GET /v1/policy`, the Pulse `ConfigSnapshot`) onto an
/// ``UploadPolicy``.
///
/// | snapshot | ``UploadPolicy`` |
/// | --- | --- |
/// | `killSwitch` | ``UploadPolicy/killSwitch`` |
/// | `maxBatchAgeMs` | ``UploadPolicy/maximumBatchAgeMilliseconds`` |
/// | `queueByteCap` | ``UploadPolicy/maximumQueueBytes`` |
/// | `sealIntervalMs` | ``UploadPolicy/sealIntervalMilliseconds`` |
/// | `batchMaxEvents` / `batchMaxBytes` | ``UploadPolicy/maximumBatchRecords`` / ``UploadPolicy/maximumBatchBytes`` |
/// | `sampling` | ``UploadPolicy/sampling`` |
/// | `diagnosticsLevel` | ``UploadPolicy/diagnosticsLevel`` |
/// | `collectKinds` | ``UploadPolicy/collectKinds`` |
///
/// Everything else (backoff, leases, attachments, record cap, encoding) keeps the value of the
/// configured base policy, and so does every field set explicitly (``UploaderConfiguration/explicitPolicy``,
/// the command-line flags of `pulsegate upload`; see ``PolicySource``). `compression`/`compressionMinBytes` and `endpoints` describe the Pulse
/// (msgtrans) hop, not the uploader's HTTP bodies, and are ignored; `requiredCapabilities` is checked
/// before anything is mapped.
enum RemotePolicy {
    /// The capabilities this uploader has, as a snapshot's `requiredCapabilities` names them.
    static let capabilities: Set<String> = [
        "batch_upload", "crash_upload", "compression:gzip", "compression:zstd", "kill_switch", "sampling",
        "collect_kinds", "diagnostics_levels",
    ]

    /// The capabilities `snapshot` requires that are not in `capabilities`, sorted.
    static func missingCapabilities(_ snapshot: ConfigSnapshot, capabilities: Set<String>) -> [String] {
        snapshot.requiredCapabilities.filter { !capabilities.contains($0) }.sorted()
    }

    /// `base` with the snapshot's values, except the `explicit` fields, validated.
    ///
    /// - Throws: ``UploaderError/Code/configuration`` when the result is out of range (nothing applies).
    static func uploadPolicy(
        _ snapshot: ConfigSnapshot, base: UploadPolicy, explicit: Set<UploadPolicy.Field> = []
    ) throws(UploaderError) -> UploadPolicy {
        var policy = base
        policy.killSwitch = snapshot.killSwitch
        policy.maximumBatchAgeMilliseconds = snapshot.maxBatchAgeMs
        policy.maximumQueueBytes = snapshot.queueByteCap
        policy.sealIntervalMilliseconds = snapshot.sealIntervalMs
        policy.maximumBatchRecords = snapshot.batchMaxEvents
        policy.maximumBatchBytes = snapshot.batchMaxBytes
        policy.sampling = snapshot.sampling
        policy.collectKinds = Set(snapshot.collectKinds)
        policy.diagnosticsLevel = snapshot.diagnosticsLevel
        for field in explicit {
            field.copy(from: base, into: &policy)
        }
        try policy.validate()
        return policy
    }
}
