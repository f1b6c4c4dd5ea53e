import PulseJSON
import PulseKit

/// Reads the fields of one JSON object node for the fast decoders, producing
/// ``PulseProtocolError``s that name the field. Missing keys and `null` are treated alike.
struct JSONObjectReader {
    let node: JSONNode

    /// Wraps `node`, which must be an object.
    init(_ node: JSONNode) throws(PulseProtocolError) {
        guard node.kind == .object else {
            throw PulseProtocolError(.typeMismatch, "$: expected an object")
        }
        self.node = node
    }

    /// The value of `key` unless it is absent or `null`.
    func optional(_ key: String) -> JSONNode? {
        guard let value = node[key], !value.isNull else {
            return nil
        }
        return value
    }

    func required(_ key: String) throws(PulseProtocolError) -> JSONNode {
        guard let value = optional(key) else {
            throw PulseProtocolError(.missingField, "\(key): required field is missing")
        }
        return value
    }

    func string(_ key: String) throws(PulseProtocolError) -> String {
        let value = try required(key)
        guard let string = value.string else {
            throw mismatch(key, "a string")
        }
        return string
    }

    func optionalString(_ key: String) throws(PulseProtocolError) -> String? {
        guard let value = optional(key) else {
            return nil
        }
        guard let string = value.string else {
            throw mismatch(key, "a string or null")
        }
        return string
    }

    func int64(_ key: String) throws(PulseProtocolError) -> Int64 {
        try int64Value(key, try required(key))
    }

    func int64(_ key: String, default defaultValue: Int64) throws(PulseProtocolError) -> Int64 {
        guard let value = optional(key) else {
            return defaultValue
        }
        return try int64Value(key, value)
    }

    func optionalInt64(_ key: String) throws(PulseProtocolError) -> Int64? {
        guard let value = optional(key) else {
            return nil
        }
        return try int64Value(key, value)
    }

    func int(_ key: String) throws(PulseProtocolError) -> Int {
        try intValue(key, try int64(key))
    }

    func int(_ key: String, default defaultValue: Int) throws(PulseProtocolError) -> Int {
        guard let value = optional(key) else {
            return defaultValue
        }
        return try intValue(key, try int64Value(key, value))
    }

    func optionalInt(_ key: String) throws(PulseProtocolError) -> Int? {
        guard let value = try optionalInt64(key) else {
            return nil
        }
        return try intValue(key, value)
    }

    func bool(_ key: String) throws(PulseProtocolError) -> Bool {
        guard let value = try required(key).bool else {
            throw mismatch(key, "a boolean")
        }
        return value
    }

    func bool(_ key: String, default defaultValue: Bool) throws(PulseProtocolError) -> Bool {
        guard let value = optional(key) else {
            return defaultValue
        }
        guard let bool = value.bool else {
            throw mismatch(key, "a boolean")
        }
        return bool
    }

    func stringArray(_ key: String, default defaultValue: [String]) throws(PulseProtocolError) -> [String] {
        guard let value = optional(key) else {
            return defaultValue
        }
        let elements = try array(key, value)
        var result: [String] = []
        result.reserveCapacity(value.count)
        for (index, element) in elements.enumerated() {
            guard let string = element.string else {
                throw mismatch("\(key)[\(index)]", "a string")
            }
            result.append(string)
        }
        return result
    }

    func kinds(_ key: String) throws(PulseProtocolError) -> [PulseEventKind] {
        guard let value = optional(key) else {
            return []
        }
        var result: [PulseEventKind] = []
        for (index, element) in try array(key, value).enumerated() {
            result.append(try PulseEventKind(jsonNode: element, field: "\(key)[\(index)]"))
        }
        return result
    }

    /// The members of the free-form object at `key` in document order; absent or `null` gives `[]`.
    func members(_ key: String) throws(PulseProtocolError) -> [JSONMember] {
        guard let value = try objectNode(key), case .object(let members) = value.value else {
            return []
        }
        return members
    }

    /// The free-form object at `key` without materialising it; `nil` when absent or `null`, an
    /// error when it is not an object (the rule of ``members(_:)``).
    func objectNode(_ key: String) throws(PulseProtocolError) -> JSONNode? {
        guard let value = optional(key) else {
            return nil
        }
        guard value.kind == .object else {
            throw mismatch(key, "an object")
        }
        return value
    }

    /// The elements of the array at `key`, or `nil` when it is absent or `null`.
    func optionalArray(_ key: String) throws(PulseProtocolError) -> JSONNode.Elements? {
        guard let value = optional(key) else {
            return nil
        }
        return try array(key, value)
    }

    /// Decodes a nested object, prefixing its errors with `key`.
    func object<T>(_ key: String, _ decode: (JSONNode) throws(PulseProtocolError) -> T) throws(PulseProtocolError) -> T
    {
        let value = try required(key)
        do {
            return try decode(value)
        } catch {
            throw error.at(key)
        }
    }

    private func array(_ key: String, _ value: JSONNode) throws(PulseProtocolError) -> JSONNode.Elements {
        guard value.kind == .array else {
            throw mismatch(key, "an array")
        }
        return value.elements
    }

    private func int64Value(_ key: String, _ value: JSONNode) throws(PulseProtocolError) -> Int64 {
        guard let int = value.int64 else {
            throw mismatch(key, "an integer")
        }
        return int
    }

    private func intValue(_ key: String, _ value: Int64) throws(PulseProtocolError) -> Int {
        guard let int = Int(exactly: value) else {
            throw mismatch(key, "an integer in range")
        }
        return int
    }

    func mismatch(_ key: String, _ expected: String) -> PulseProtocolError {
        PulseProtocolError(.typeMismatch, "\(key): expected \(expected)")
    }
}

extension PulseProtocolError {
    /// Fast-decoder messages have the form `<path>: <text>`, where the path is relative to the value
    /// being decoded and `$` stands for that value itself. `at(_:)` re-roots the path one level up:
    /// `kind: ...` becomes `events[3].kind: ...`, `$: expected an object` becomes `source: ...`, and
    /// the public entry points finally root everything at `$`.
    func at(_ prefix: String) -> PulseProtocolError {
        let text: String
        if message.hasPrefix("$") {
            text = prefix + message.dropFirst()
        } else if message.hasPrefix("[") {
            text = prefix + message
        } else {
            text = prefix + "." + message
        }
        return PulseProtocolError(code, text, underlying: underlying)
    }
}
