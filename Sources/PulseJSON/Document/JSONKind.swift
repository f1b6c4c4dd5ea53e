/// The kind of a JSON value as the parser classified it.
///
/// Integers without fraction or exponent are ``int`` when they fit `Int64` and ``uint`` when they
/// only fit `UInt64` (above `Int64.max`). Any number written with a fraction or an exponent is
/// ``double`` (so `1.0` and `1e2` are doubles, `-0` is the integer 0 and `-0.0` the double -0.0).
public enum JSONKind: UInt8, Sendable, Hashable, CaseIterable {
    case null = 0
    case bool = 1
    case int = 2
    case uint = 3
    case double = 4
    case string = 5
    case array = 6
    case object = 7
}
