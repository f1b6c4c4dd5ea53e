import OTLPProtobuf
import PulseHashing
package import PulseJSON

/// Entry points for `pulsegate-bench mapping` and `pulsegate-bench stages` (package access only;
/// not public API).
package enum MappingBenchmarkHooks {
    static let context = MappingContext(
        appID: "bench", batchID: "bench-batch", receivedAt: 1_700_000_100_000, sentAt: nil,
        fallbacks: IdentityFallbacks(
            deviceID: "bench-device", sdkVersion: "bench/1", platform: "linux"))

    /// Maps an OTLP/JSON logs export request as the intake does (the one walk: type checks,
    /// mapping, diagnostics observation); returns the number of outbox rows, or -1 when the
    /// request is rejected.
    package static func mapLogs(_ root: JSONNode) -> Int {
        do {
            return try OTLPMapper.map(root, signal: .logs, context: walkContext).drafts.count
        } catch {
            return -1
        }
    }

    /// What the intake passes the walk: the bench context with a batch sequence header, so the
    /// diagnostics observation is made.
    static let walkContext = {
        var walkContext = context
        walkContext.sequenceHeader = "1"
        return walkContext
    }()

    /// Whether the walk of a logs request made a diagnostics observation (1) or not (0), -1 when
    /// the request is rejected.
    package static func observesDiagnostics(_ root: JSONNode) -> Int {
        guard let mapped = try? OTLPMapper.map(root, signal: .logs, context: walkContext) else { return -1 }
        return mapped.diagnostics == nil ? 0 : 1
    }

    /// A protobuf logs export request decoded as the intake does it: straight into the document.
    package static func decodeProtobufLogs(_ body: [UInt8]) -> JSONDocument? {
        try? OTLPProtobuf.decodeDocument(body, signal: .logs)
    }

    /// The protobuf path before the single pass: transcoded to OTLP/JSON text, then parsed.
    package static func transcodeAndParseProtobufLogs(_ body: [UInt8], parser: JSONParser) -> JSONDocument? {
        guard let json = try? OTLPProtobuf.transcodeToJSON(body, signal: .logs) else { return nil }
        return try? parser.parse(json)
    }

    /// What the intake does with a body and its mapped drafts besides the walk: the body's SHA-256
    /// (the batch id and dedup key) and each draft's payload encoded for its outbox row (zstd
    /// above the threshold). Returns the stored bytes.
    package static func encodeForStorage(body: [UInt8], root: JSONNode) -> Int {
        guard let mapped = try? OTLPMapper.map(root, signal: .logs, context: context) else { return -1 }
        var bytes = SHA256.hash(body).count
        for draft in mapped.drafts {
            bytes += StoredPayload(encoding: draft.payload).bytes.count
        }
        return bytes
    }

}
