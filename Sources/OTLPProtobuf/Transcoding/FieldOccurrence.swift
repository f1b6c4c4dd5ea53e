/// One occurrence of a known field, recorded while scanning a message.
///
/// 16 bytes: the transcoder keeps one per known field on the wire for the message being written
/// and its ancestors, so this is what bounds its working memory (at most 8 bytes per input byte
/// and level, since every field takes at least two bytes). The occurrences of one field in one
/// message are chained in wire order (``next``), from the ``FieldChain`` the message keeps for the
/// field, so writing a field visits its own occurrences only.
struct FieldOccurrence {
    /// The varint or fixed-width value, or for length-delimited fields the payload's start offset.
    var value: UInt64
    /// For length-delimited fields, the payload's end offset (inputs are smaller than 4 GiB); 0 for
    /// the other wire types (a payload follows its tag, so it never ends at offset 0).
    var end: UInt32
    /// The index of the field's next occurrence in this message, 0 after the last one (a later
    /// occurrence has a larger index, so 0 is never a next one).
    var next: UInt32

    /// Whether the occurrence is length-delimited (a packed run, for a repeated numeric field).
    var isLengthDelimited: Bool { end != 0 }

    /// The payload range of a length-delimited occurrence: ``WireReader/readLengthDelimited()``'s
    /// range, stored as it was (so its bounds need no check).
    var payload: Range<Int> {
        assert(isLengthDelimited, "only a length-delimited occurrence has a payload")
        return Range(uncheckedBounds: (Int(truncatingIfNeeded: value), Int(end)))
    }
}

/// The first and last occurrence of a field in the message being scanned (indexes of the
/// transcoder's occurrence stack); the others are chained from the first.
struct FieldChain {
    var first: UInt32
    var last: UInt32
}

/// Where a message's bytes are: one range, or several occurrences of one field that protobuf
/// merges into one message (a singular message field seen more than once is parsed as the
/// concatenation of its occurrences).
enum MessageSource {
    /// A single byte range (the request itself, or one element of a repeated field).
    case range(Range<Int>)
    /// The payloads of the occurrence at index `first` and of those chained after it.
    case chain(first: Int)
}

/// One step of the field path used in error messages: `scopeLogs[1]`, `body`, `#99`.
///
/// A trivial value, so keeping the path up to date costs no reference counting.
struct PathComponent {
    var name: StaticString
    /// The element index for repeated fields, `-1` for singular ones.
    var index: Int
    /// The field number of an unknown field (written `#<number>`), 0 for known fields.
    var unknownNumber: UInt32 = 0

    var rendered: String {
        if unknownNumber != 0 { return "#\(unknownNumber)" }
        return index >= 0 ? "\(name)[\(index)]" : name.description
    }
}
