import PulseJSON

/// Entry points for `pulsegate-bench mapping` (package access only; not public API).
package enum MappingBenchmarkHooks {
    static let context = MappingContext(
        appID: "bench", batchID: "bench-batch", receivedAt: 1_700_000_100_000, sentAt: nil,
        fallbacks: IdentityFallbacks(
            deviceID: "bench-device", sdkVersion: "bench/1", platform: "linux"))

    /// Maps an OTLP/JSON logs export request as the intake does; returns the number of outbox
    /// rows, or -1 when the request is rejected. `validating: false` skips the type checks.
    package static func mapLogs(_ root: JSONNode, validating: Bool) -> Int {
        do {
            return try OTLPMapper.map(root, signal: .logs, context: context, validating: validating).drafts.count
        } catch {
            return -1
        }
    }

    /// Only the type checks of a logs export request; 1 when valid, -1 when not.
    package static func validateLogs(_ root: JSONNode) -> Int {
        do {
            try OTLPValidator.validate(root, signal: .logs)
            return 1
        } catch {
            return -1
        }
    }
}
