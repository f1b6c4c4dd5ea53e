/// How much self-diagnostic data the SDK gathers and reports (the Xray levels).
///
/// Each level includes everything of the levels before it; they compare in declaration order
/// (``none`` < ``batchSummaries`` < ``callDetails`` < ``callDetailsAndStackTraces``).

import PulseKit

public enum DiagnosticsLevel: String, Sendable, Hashable, CaseIterable, Codable, Comparable {
    /// Gather nothing.
    case none
    /// Cumulative per-session batch counters (attempted, sent, failed); the default.
    case batchSummaries
    /// Counters plus logged messages for every call into the SDK.
    case callDetails
    /// Call details plus the stack trace of each call site (expensive).
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

    public init(from decoder: any Decoder) throws {
        try self.init(from: decoder, noun: "diagnosticsLevel")
    }
}
