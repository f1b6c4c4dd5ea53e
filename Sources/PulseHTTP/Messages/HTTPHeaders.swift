/// An ordered list of HTTP header fields with case-insensitive name lookup.
///
/// Order and duplicates are preserved as received; lookups compare names ASCII case-insensitively.
package struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field.
    package struct Field: Sendable, Equatable {
        /// The field name, with the case it was given.
        package var name: String
        /// The field value.
        package var value: String

        /// Creates a field.
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates an empty header list.
    package init() {
        fields = []
    }

    /// Creates a header list from fields, in order.
    package init(_ fields: [Field]) {
        self.fields = fields
    }

    package init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The number of fields.
    package var count: Int { fields.count }

    /// `true` when there are no fields.
    package var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field with this name (case-insensitive), or `nil`.
    package subscript(name: String) -> String? {
        fields.first { Self.namesEqual($0.name, name) }?.value
    }

    /// Every value of the fields with this name (case-insensitive), in order.
    package func values(for name: String) -> [String] {
        fields.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    /// `true` when a field with this name exists (case-insensitive).
    package func contains(_ name: String) -> Bool {
        fields.contains { Self.namesEqual($0.name, name) }
    }

    /// Appends a field, keeping any existing fields of the same name.
    package mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field of this name with a single field.
    package mutating func set(name: String, value: String) {
        remove(name: name)
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field of this name (case-insensitive).
    package mutating func remove(name: String) {
        fields.removeAll { Self.namesEqual($0.name, name) }
    }

    package func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// Compares two field names ASCII case-insensitively without allocating.
    static func namesEqual(_ lhs: String, _ rhs: String) -> Bool {
        // Case folding keeps every byte's place, so names of other lengths never match; a native
        // string knows its UTF-8 count, which rules most names out before a byte is read.
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let l?, let r?):
                if l != r && asciiLower(l) != asciiLower(r) { return false }
            default: return false
            }
        }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
