import PulseJSON
import PulseKit

/// Reads the members of one JSON object node for the fast decoders, producing
/// ``PulseProtocolError``s that name the member. Missing keys and `null` are treated alike. The
/// values are read by their ``WireReadable`` kind, whose errors are re-rooted at the key.
struct JSONObjectReader {
    let node: JSONNode

    /// Wraps `node`, which must be an object.
    init(_ node: JSONNode) throws(PulseProtocolError) {
        guard node.kind == .object else {
            throw .mismatch("an object")
        }
        self.node = node
    }

    /// The node of `key` unless it is absent or `null`.
    func optional(_ key: String) -> JSONNode? {
        guard let value = node[key], !value.isNull else {
            return nil
        }
        return value
    }

    /// The node of `key`, which must be present and not `null`.
    func required(_ key: String) throws(PulseProtocolError) -> JSONNode {
        guard let value = optional(key) else {
            throw PulseProtocolError(.missingField, "\(key): required field is missing")
        }
        return value
    }

    /// The value of `key`, which must be present and not `null`.
    func value<Value: WireReadable>(_ key: String) throws(PulseProtocolError) -> Value {
        try read(key, try required(key), nullable: false)
    }

    /// The value of `key`, or `nil` when it is absent or `null`.
    func nullable<Value: WireReadable>(_ key: String) throws(PulseProtocolError) -> Value? {
        guard let node = optional(key) else {
            return nil
        }
        return try read(key, node, nullable: true) as Value
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
            throw .mismatch("an object", at: key)
        }
        return value
    }

    private func read<Value: WireReadable>(
        _ key: String, _ node: JSONNode, nullable: Bool
    ) throws(PulseProtocolError) -> Value {
        do {
            return try Value(wireNode: node, nullable: nullable)
        } catch {
            throw error.at(key)
        }
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
