/// How much the uploader records about its own delivery (the SDK diagnostics proposal's "Xray" levels).
///
/// Each level includes everything of the levels before it. New integrations default to
/// ``batchSummaries``: cumulative delivery counters ride in every sealed batch.
public enum DiagnosticsLevel: String, Sendable, Equatable, CaseIterable, Comparable {
    /// No diagnostics are recorded or uploaded.
    case none
    /// Cumulative per-session delivery counters and the latest errors, attached to every sealed batch.
    case batchSummaries
    /// Also a bounded log of uploader API calls and their outcome.
    case callDetails
    /// Also the caller's stack for every logged call.
    case callDetailsAndStackTraces

    private var rank: Int {
        switch self {
        case .none: 0
        case .batchSummaries: 1
        case .callDetails: 2
        case .callDetailsAndStackTraces: 3
        }
    }

    /// Orders levels from ``none`` to ``callDetailsAndStackTraces``.
    public static func < (lhs: DiagnosticsLevel, rhs: DiagnosticsLevel) -> Bool { lhs.rank < rhs.rank }
}
