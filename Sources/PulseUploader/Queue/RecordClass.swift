/// The queue class of a record and of the batch it is sealed into.
///
/// Records of different classes are never sealed into one batch, so a batch's class decides its drop order at
/// the cap and whether it may wait for better conditions.
public enum RecordClass: Int, Sendable, CaseIterable, Comparable, CustomStringConvertible {
    /// Attachments: dropped first at the cap; each is sealed alone; always sent through the background path.
    case attachment = 0
    /// Logs, events, spans and metric points: dropped oldest first once no attachment is left.
    case standard = 1
    /// Exit and session-summary records: dropped last (with crashes), oldest first.
    case lifecycle = 2
    /// Crash reports: dropped last, never deferred, sealed at once and sent through the background path.
    case crash = 3

    /// Whether this class is kept until nothing of a lower class is left (crash, exit, session summary).
    public var isPriority: Bool { self == .lifecycle || self == .crash }

    /// Whether uploads of this class ignore deferral (metered network, low power).
    public var isUrgent: Bool { self == .crash }

    /// The class's rank in drop order: lower ranks are dropped first.
    var dropRank: Int {
        switch self {
        case .attachment: return 0
        case .standard: return 1
        case .lifecycle, .crash: return 2
        }
    }

    public static func < (lhs: RecordClass, rhs: RecordClass) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    public var description: String {
        switch self {
        case .attachment: return "attachment"
        case .standard: return "standard"
        case .lifecycle: return "lifecycle"
        case .crash: return "crash"
        }
    }
}
