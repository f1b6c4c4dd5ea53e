import OTLPProtobuf
package import PulseJSON

/// Entry point for the `fuzz-json` and `fuzz-protobuf` targets (package access only; not public
/// API): the mapping walk on any parsed document, against the type checks in document order.
package enum MappingFuzzHooks {
    static let context = MappingContext(
        appID: "fuzz", batchID: "fuzz-batch", receivedAt: 1_700_000_100_000, sentAt: 1_700_000_000_000,
        fallbacks: IdentityFallbacks(deviceID: "fuzz-device", sdkVersion: "fuzz/1", platform: "linux"),
        sequenceHeader: "3")

    /// Walks `root` as an export request of each signal and returns a description of the first
    /// disagreement, or `nil`: a request the walk maps must pass the type checks, a wrongly typed
    /// member the walk meets must be one the checks find too, a rejection must name the checks'
    /// first problem, and mapping twice must give the same result.
    package static func disagreement(_ root: JSONNode) -> String? {
        for signal in [OTLPSignal.logs, .traces, .metrics] {
            guard root.kind == .object, let resources = root[signal.resourceKey], resources.kind == .array else {
                continue
            }
            var ordered: IntakeRejection?
            do {
                try OTLPValidator.validate(root, signal: signal)
            } catch {
                ordered = error
            }
            do {
                let mapped = try OTLPMapper.walk(root, resources: resources, signal: signal, context: context)
                if let ordered { return "\(signal): the walk mapped a request the checks refuse (\(ordered.message))" }
                guard (try? OTLPMapper.map(root, signal: signal, context: context)) == mapped else {
                    return "\(signal): a second mapping differs"
                }
            } catch {
                if case .invalid(let failure) = error, ordered == nil {
                    return "\(signal): the walk refused a member the checks accept (\(failure.problem))"
                }
                do {
                    _ = try OTLPMapper.map(root, signal: signal, context: context)
                    return "\(signal): the walk stopped but the mapping succeeded"
                } catch {
                    if let ordered, error.message != ordered.message {
                        return "\(signal): the rejection is not the checks' first problem (\(error.message))"
                    }
                }
            }
        }
        return nil
    }
}
