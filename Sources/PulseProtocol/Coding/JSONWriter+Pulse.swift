import PulseJSON

extension JSONWriter {
    /// Writes a member whose value is an array of strings.
    mutating func writeStrings(_ key: String, _ values: [String]) {
        self.key(key)
        beginArray()
        for value in values {
            string(value)
        }
        endArray()
    }

    /// Writes a member whose value is an array of event kinds.
    mutating func writeKinds(_ key: String, _ kinds: [PulseEventKind]) {
        self.key(key)
        beginArray()
        for kind in kinds {
            string(kind.rawValue)
        }
        endArray()
    }
}
