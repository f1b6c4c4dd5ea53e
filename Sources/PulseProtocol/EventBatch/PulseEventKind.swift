import PulseJSON
public import PulseKit

/// The kind of a Pulse event record: exactly one of eight case-sensitive strings.
///
/// Kinds are records inside `CLIENT_EVENT_BATCH_UPLOAD`; they never get their own `biz_type`. A
/// strict decoder rejects an unknown kind (and with it the whole batch) with
/// ``PulseProtocolError/Code/unknownEventKind`` naming the kind.
public enum PulseEventKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// `Analytics`
    case analytics = "Analytics"
    /// `Crash` (legacy crash events inside event batches remain valid)
    case crash = "Crash"
    /// `Error`
    case error = "Error"
    /// `Log`
    case log = "Log"
    /// `Network`
    case network = "Network"
    /// `Performance`
    case performance = "Performance"
    /// `Runtime`
    case runtime = "Runtime"
    /// `Breadcrumb`
    case breadcrumb = "Breadcrumb"

    /// Parses a wire kind, throwing a ``PulseProtocolError`` that names an unknown kind.
    public init(wireValue: String) throws(PulseProtocolError) {
        guard let kind = PulseEventKind(rawValue: wireValue) else {
            throw PulseProtocolError(.unknownEventKind, Self.unknownKindMessage(wireValue))
        }
        self = kind
    }

    /// Reads a kind for the fast decoders; errors name `field`.
    init(jsonNode node: JSONNode, field: String) throws(PulseProtocolError) {
        // Compare bytes in place: no String is created for the common, valid case.
        for kind in PulseEventKind.allCases where node.stringEquals(kind.rawValue) {
            self = kind
            return
        }
        guard let text = node.string else {
            throw PulseProtocolError(.typeMismatch, "\(field): expected a string")
        }
        guard let kind = PulseEventKind(rawValue: text) else {
            throw PulseProtocolError(.unknownEventKind, "\(field): " + Self.unknownKindMessage(text))
        }
        self = kind
    }

    private static func unknownKindMessage(_ wireValue: String) -> String {
        "unknown event kind \(PulseProtocolError.quoted(wireValue)); expected one of "
            + PulseEventKind.allCases.map(\.rawValue).joined(separator: ", ")
    }

    public init(from decoder: any Decoder) throws {
        try self.init(wireValue: try decoder.singleValueContainer().decode(String.self))
    }
}
