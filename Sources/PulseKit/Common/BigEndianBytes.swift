/// Integers as network-order (big-endian) bytes, the one way the wire formats write them (msgtrans
/// frame headers, PostgreSQL binary parameters).
extension Array where Element == UInt8 {
    /// The bytes of `value`, most significant first (`T.bitWidth / 8` of them).
    package init<T: FixedWidthInteger>(bigEndian value: T) {
        self = []
        appendBigEndian(value)
    }

    /// Appends the bytes of `value`, most significant first.
    package mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}
