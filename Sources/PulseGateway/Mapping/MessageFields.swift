import PulseJSON

/// The known members of one object by field index of its message's ``OTLPValidator/Schema``, as
/// the type checks' one pass over the object's members found them
/// (``MappingWalk/fields(of:_:)``): the mapper reads a field here instead of looking its member up
/// again. The checks refuse a known member that appears twice, so each field has at most one
/// member, the one `object[name]` would find. Members are kept as their places in the document
/// (``JSONCursor/place``), so filling and copying this costs no reference counting.
struct MessageFields {
    /// The most fields a message has (`Span`'s 16).
    static let capacity = 16

    /// The object.
    let object: JSONCursor
    /// By field, the place of its member, or `UInt32.max`.
    private var places = InlineArray<16, UInt32>(repeating: .max)

    init(of object: JSONCursor) {
        self.object = object
    }

    /// The member of field `field` (`null` included), or `nil` when the object has none.
    subscript(field: Int) -> JSONCursor? {
        let place = places[field]
        return place == .max ? nil : JSONCursor(inDocumentOf: object, at: place)
    }

    /// Notes `value` as the member of field `field`.
    mutating func note(_ field: Int, _ value: JSONCursor) {
        places[field] = value.place
    }
}
