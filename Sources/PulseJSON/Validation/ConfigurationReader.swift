/// Reads the values of a JSON configuration file and collects a ``ConfigurationProblem`` for every
/// value that is not what it should be, so a check reports every problem, not only the first.
///
/// Each reader returns the value, or `nil` after recording a problem at `path`.
///
/// ```swift
/// var reader = ConfigurationReader()
/// for (key, value) in root.members {
///     switch key {
///     case "port": port = reader.integer(key, value, 1...65535)
///     default: reader.fail(key, "unknown config key")
///     }
/// }
/// // reader.problems lists everything wrong
/// ```
package struct ConfigurationReader: Sendable {
    /// The problems found so far, in the order they were found.
    package private(set) var problems: [ConfigurationProblem] = []

    /// Creates a reader with no problems.
    package init() {}

    /// Records a problem.
    package mutating func fail(_ path: String, _ message: String) {
        problems.append(ConfigurationProblem(path, message))
    }

    /// A string.
    package mutating func string(_ path: String, _ node: JSONNode) -> String? {
        guard let value = node.string else {
            fail(path, "must be a string")
            return nil
        }
        return value
    }

    /// A non-empty string.
    package mutating func nonEmptyString(_ path: String, _ node: JSONNode) -> String? {
        guard let value = string(path, node) else { return nil }
        guard !value.isEmpty else {
            fail(path, "must not be empty")
            return nil
        }
        return value
    }

    /// `true` or `false`.
    package mutating func bool(_ path: String, _ node: JSONNode) -> Bool? {
        guard let value = node.bool else {
            fail(path, "must be true or false")
            return nil
        }
        return value
    }

    /// An array of strings (`expected` describes it in the problem); `nil` when it is not one or
    /// an element is not a string (each such element is a problem at `path[index]`).
    package mutating func strings(_ path: String, _ node: JSONNode, _ expected: String = "an array of strings")
        -> [String]?
    {
        guard node.kind == .array else {
            fail(path, "must be \(expected)")
            return nil
        }
        var values: [String] = []
        var valid = true
        for (index, element) in node.elements.enumerated() {
            if let text = string("\(path)[\(index)]", element) { values.append(text) } else { valid = false }
        }
        return valid ? values : nil
    }

    /// An integer, in `range` when one is given.
    package mutating func integer(_ path: String, _ node: JSONNode, _ range: ClosedRange<Int>? = nil) -> Int? {
        guard let value = node.int64, let fitted = Int(exactly: value) else {
            fail(path, "must be an integer")
            return nil
        }
        if let range, !range.contains(fitted) {
            if range.upperBound == Int.max {
                fail(path, "must be at least \(range.lowerBound), not \(fitted)")
            } else {
                fail(path, "must be \(range.lowerBound) to \(range.upperBound), not \(fitted)")
            }
            return nil
        }
        return fitted
    }

    /// A positive integer.
    package mutating func positive(_ path: String, _ node: JSONNode) -> Int? {
        integer(path, node, 1...Int.max)
    }

    /// A positive, finite number.
    package mutating func positiveNumber(_ path: String, _ node: JSONNode) -> Double? {
        guard let value = node.double, value.isFinite, value > 0 else {
            fail(path, "must be a positive number")
            return nil
        }
        return value
    }

    /// Whether `node` is an object (a problem when not).
    package mutating func object(_ path: String, _ node: JSONNode) -> Bool {
        guard node.kind == .object else {
            fail(path, "must be an object")
            return false
        }
        return true
    }

    /// Records an "unknown config key" problem at `path.key` for every member of the object `node`
    /// whose key is not in `known`; nothing when `node` is not an object.
    package mutating func rejectUnknownKeys(_ path: String, _ node: JSONNode, known: Set<String>) {
        guard node.kind == .object else { return }
        for (key, _) in node.members where !known.contains(key) {
            fail(path.isEmpty ? key : "\(path).\(key)", "unknown config key")
        }
    }

    /// Whether `node` is an array (a problem when not).
    package mutating func array(_ path: String, _ node: JSONNode) -> Bool {
        guard node.kind == .array else {
            fail(path, "must be an array")
            return false
        }
        return true
    }
}
