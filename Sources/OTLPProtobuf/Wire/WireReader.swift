/// The protobuf wire types (proto3 encoding).

import PulseKit

enum WireType: UInt8, Sendable {
    case varint = 0
    case fixed64 = 1
    case lengthDelimited = 2
    case startGroup = 3
    case endGroup = 4
    case fixed32 = 5
}

/// A problem found by ``WireReader``, before the transcoder adds the field path.
struct WireFault: Error {
    var code: OTLPProtobufError.Code
    var what: String
    var offset: Int
}

/// One field's tag: number and wire type.
struct WireTag: Sendable {
    var number: UInt32
    var wireType: WireType
}

/// A bounds-checked cursor over protobuf wire bytes.
///
/// The reader never reads outside `position..<end`; every read either returns a value and advances
/// or throws a ``WireFault`` without advancing past `end`.
struct WireReader {
    /// The whole input; `position` and `end` index into it.
    let base: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var position: Int
    /// One past the last byte this reader may read.
    let end: Int

    init(_ base: UnsafeBufferPointer<UInt8>, range: Range<Int>) {
        self.base = base
        position = range.lowerBound
        end = range.upperBound
    }

    var isAtEnd: Bool { position >= end }

    /// Reads a varint of up to 10 bytes whose value fits in 64 bits.
    @inline(__always)
    mutating func readVarint() throws(WireFault) -> UInt64 {
        if position < end {
            let first = base[position]
            if first < 0x80 {
                position += 1
                return UInt64(first)
            }
        }
        return try readLongVarint()
    }

    /// ``readVarint()`` past its one-byte fast path.
    private mutating func readLongVarint() throws(WireFault) -> UInt64 {
        let start = position
        guard position < end else { throw WireFault(code: .truncated, what: "truncated varint", offset: start) }
        var result: UInt64 = 0
        var shift: UInt64 = 0
        var cursor = position
        while true {
            guard cursor < end else { throw WireFault(code: .truncated, what: "truncated varint", offset: start) }
            let byte = base[cursor]
            cursor += 1
            if shift == 63 {
                // The tenth byte holds bit 63 only.
                if byte & 0x80 != 0 {
                    throw WireFault(code: .varintOverflow, what: "varint longer than 10 bytes", offset: start)
                }
                if byte > 1 {
                    throw WireFault(code: .varintOverflow, what: "varint overflows 64 bits", offset: start)
                }
                result |= UInt64(byte) << 63
                break
            }
            result |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        position = cursor
        return result
    }

    /// Reads a little-endian 32-bit value.
    mutating func readFixed32() throws(WireFault) -> UInt32 {
        guard end - position >= 4 else {
            throw WireFault(code: .truncated, what: "truncated fixed32 field", offset: position)
        }
        let value = UInt32(littleEndian: UnsafeRawPointer(base.baseAddress! + position).loadUnaligned(as: UInt32.self))
        position += 4
        return value
    }

    /// Reads a little-endian 64-bit value.
    mutating func readFixed64() throws(WireFault) -> UInt64 {
        guard end - position >= 8 else {
            throw WireFault(code: .truncated, what: "truncated fixed64 field", offset: position)
        }
        let value = UInt64(littleEndian: UnsafeRawPointer(base.baseAddress! + position).loadUnaligned(as: UInt64.self))
        position += 8
        return value
    }

    /// Reads a length prefix and returns the range of the bytes it covers, skipping them.
    mutating func readLengthDelimited() throws(WireFault) -> Range<Int> {
        let start = position
        let length = try readVarint()
        // `position <= end` (no read passes `end`), so neither the room nor the range's end can
        // overflow, and the range is well-formed.
        guard length <= UInt64(truncatingIfNeeded: end &- position) else {
            throw WireFault(code: .truncated, what: "truncated length-delimited field", offset: start)
        }
        let range = Range(uncheckedBounds: (position, position &+ Int(truncatingIfNeeded: length)))
        position = range.upperBound
        return range
    }

    /// Reads a tag, rejecting field number 0, numbers beyond 2^29 - 1, wire types 6 and 7 and
    /// groups (wire types 3 and 4).
    @inline(__always)
    mutating func readTag() throws(WireFault) -> WireTag {
        let start = position
        let key = try readVarint()
        guard key <= UInt64(UInt32.max), key >> 3 != 0 else {
            throw WireFault(code: .invalidFieldNumber, what: "invalid field number", offset: start)
        }
        guard let wireType = WireType(rawValue: UInt8(key & 7)) else {
            throw WireFault(code: .invalidWireType, what: "invalid wire type \(key & 7)", offset: start)
        }
        if wireType == .startGroup || wireType == .endGroup {
            throw WireFault(code: .groupNotSupported, what: "groups are not supported", offset: start)
        }
        return WireTag(number: UInt32(key >> 3), wireType: wireType)
    }
}
