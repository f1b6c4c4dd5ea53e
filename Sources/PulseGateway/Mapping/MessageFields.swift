import PulseJSON

/// The known members of one object by field index of its message's ``OTLPValidator/Schema``, as
/// the type checks' one pass over the object's members found them
/// (``MappingWalk/fields(of:_:)``): the mapper reads a field here instead of looking its member up
/// again. The checks refuse a known member that appears twice, so each field has at most one
/// member, the one `object[name]` would find.
struct MessageFields {
    /// The most fields a message has (`Span`'s 16).
    static let capacity = 16

    private var values = InlineArray<16, JSONNode?>(repeating: nil)

    /// The member of field `field` (`null` included), or `nil` when the object has none.
    subscript(field: Int) -> JSONNode? {
        get { values[field] }
        set { values[field] = newValue }
    }
}
