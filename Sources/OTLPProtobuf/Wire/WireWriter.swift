/// Appends protobuf wire encodings to a byte buffer (the few messages this module writes).
struct WireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func tag(_ number: UInt32, _ wireType: WireType) {
        varint(UInt64(number) << 3 | UInt64(wireType.rawValue))
    }

    /// An `int64` or `int32` field as a varint (negative values take ten bytes, as protobuf
    /// sign-extends both); nothing when the value is 0 (proto3 default).
    mutating func int64Field(_ number: UInt32, _ value: Int64) {
        guard value != 0 else { return }
        tag(number, .varint)
        varint(UInt64(bitPattern: value))
    }

    /// A `string` field; nothing when the string is empty (proto3 default).
    mutating func stringField(_ number: UInt32, _ value: String) {
        guard !value.isEmpty else { return }
        bytesField(number, Array(value.utf8))
    }

    /// A length-delimited field holding `payload` (written even when empty).
    mutating func bytesField(_ number: UInt32, _ payload: [UInt8]) {
        tag(number, .lengthDelimited)
        varint(UInt64(payload.count))
        bytes.append(contentsOf: payload)
    }
}
