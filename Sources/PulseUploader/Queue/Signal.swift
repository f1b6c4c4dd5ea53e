package import OTLPProtobuf

/// The OTLP signal a record or batch belongs to; each has its own endpoint path
/// (``OTLPProtobufSignal/path``). The project's one signal enum.
package typealias Signal = OTLPProtobufSignal

extension OTLPProtobufSignal {
    /// The code the uploader's queue stores for the signal (0 logs, 1 traces, 2 metrics).
    var storageCode: Int {
        switch self {
        case .logs: return 0
        case .traces: return 1
        case .metrics: return 2
        }
    }

    /// The signal of a stored code; `nil` for an unknown code.
    init?(storageCode: Int) {
        switch storageCode {
        case 0: self = .logs
        case 1: self = .traces
        case 2: self = .metrics
        default: return nil
        }
    }
}
