/// One occurrence of a known field, recorded while scanning a message.
///
/// 16 bytes: the transcoder keeps one per known field on the wire for the message being written
/// and its ancestors, so this is what bounds its working memory (at most 8 bytes per input byte,
/// since every field takes at least two bytes).
struct FieldOccurrence {
    /// The varint or fixed-width value, or for length-delimited fields the payload's start offset.
    var value: UInt64
    /// For length-delimited fields, the payload's end offset (inputs are smaller than 4 GiB).
    var end: UInt32
    /// The field's index in its ``MessageSchema``.
    var fieldIndex: UInt8
    var wireType: WireType

    /// The payload range of a length-delimited occurrence.
    var payload: Range<Int> { Int(value)..<Int(end) }
}

/// Where a message's bytes are: one range, or several occurrences of one field that protobuf
/// merges into one message (a singular message field seen more than once is parsed as the
/// concatenation of its occurrences).
enum MessageSource {
    /// A single byte range (the request itself).
    case range(Range<Int>)
    /// The payloads of the occurrences in `from..<to` whose field index is `fieldIndex`.
    case occurrences(from: Int, to: Int, fieldIndex: UInt8)
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
