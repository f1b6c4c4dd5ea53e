import PulseJSON
import PulseProtocol

/// Sorts object members by key, recursively. Foundation's `JSONEncoder` writes keys in an unspecified
/// order, so comparisons against its output normalize free-form objects first.
func sortedMembers(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements): return .array(elements.map(sortedMembers))
    case .object(let members): return .object(sortedMembers(members))
    default: return value
    }
}

func sortedMembers(_ members: [JSONMember]) -> [JSONMember] {
    members.map { JSONMember(key: $0.key, value: sortedMembers($0.value)) }.sorted { $0.key < $1.key }
}

extension EventBatch {
    var membersSorted: EventBatch {
        var copy = self
        for index in copy.events.indices {
            copy.events[index].attributes = sortedMembers(copy.events[index].attributes)
        }
        return copy
    }
}

extension CrashBatch {
    var membersSorted: CrashBatch {
        var copy = self
        for index in copy.crashes.indices {
            copy.crashes[index].attributes = sortedMembers(copy.crashes[index].attributes)
        }
        return copy
    }
}

/// The bytes of a string literal.
func utf8(_ text: String) -> [UInt8] {
    Array(text.utf8)
}
