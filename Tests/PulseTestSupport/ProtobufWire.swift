/// Builds protobuf wire bytes for tests.
package struct Wire {
    package var bytes: [UInt8] = []

    package init() {}

    package init(_ build: (inout Wire) -> Void) {
        build(&self)
    }

    package mutating func raw(_ more: [UInt8]) { bytes += more }

    package mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    package mutating func tag(_ number: UInt32, _ wireType: UInt8) {
        varint(UInt64(number) << 3 | UInt64(wireType))
    }

    package mutating func varintField(_ number: UInt32, _ value: UInt64) {
        tag(number, 0)
        varint(value)
    }

    package mutating func fixed64Field(_ number: UInt32, _ value: UInt64) {
        tag(number, 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    package mutating func doubleField(_ number: UInt32, _ value: Double) {
        fixed64Field(number, value.bitPattern)
    }

    package mutating func fixed32Field(_ number: UInt32, _ value: UInt32) {
        tag(number, 5)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    package mutating func field(_ number: UInt32, _ payload: [UInt8]) {
        tag(number, 2)
        varint(UInt64(payload.count))
        bytes += payload
    }

    package mutating func field(_ number: UInt32, _ text: String) {
        field(number, Array(text.utf8))
    }

    package mutating func field(_ number: UInt32, _ build: (inout Wire) -> Void) {
        field(number, Wire(build).bytes)
    }
}
