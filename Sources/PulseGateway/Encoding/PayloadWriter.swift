/// A compact JSON byte writer for the gateway's hot path: Pulse payloads, OTLP responses, logs.
///
/// Same output format as `PulseJSON.JSONWriter` (no whitespace; `"` `\` and control characters
/// escaped, `\u00XX` lower-case; everything else raw UTF-8; doubles in Swift's shortest form with
/// a fraction or exponent), plus methods that take raw UTF-8 buffers, so strings read from a parsed
/// document are copied once, straight from the document into the payload, without becoming
/// `String`s. Inside an object every value must follow ``key(_:)``.
struct PayloadWriter {
    var bytes: [UInt8]
    private var needsComma = false

    init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the output, keeping its capacity.
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Structure

    mutating func beginObject() {
        separate()
        bytes.append(0x7B)
        needsComma = false
    }

    mutating func endObject() {
        bytes.append(0x7D)
        needsComma = true
    }

    mutating func beginArray() {
        separate()
        bytes.append(0x5B)
        needsComma = false
    }

    mutating func endArray() {
        bytes.append(0x5D)
        needsComma = true
    }

    mutating func key(_ key: StaticString) {
        separate()
        bytes.append(0x22)
        key.withUTF8Buffer { escape($0) }
        bytes.append(0x22)
        bytes.append(0x3A)
        needsComma = false
    }

    mutating func key(_ key: String) {
        separate()
        quoted(key)
        bytes.append(0x3A)
        needsComma = false
    }

    mutating func key(utf8 key: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(0x22)
        escape(key)
        bytes.append(0x22)
        bytes.append(0x3A)
        needsComma = false
    }

    /// Appends an already encoded JSON value as is.
    mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    // MARK: Scalars

    mutating func string(_ value: String) {
        separate()
        quoted(value)
        needsComma = true
    }

    mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(0x22)
        escape(value)
        bytes.append(0x22)
        needsComma = true
    }

    mutating func string(_ value: StaticString) {
        separate()
        bytes.append(0x22)
        value.withUTF8Buffer { escape($0) }
        bytes.append(0x22)
        needsComma = true
    }

    mutating func int(_ value: Int64) {
        separate()
        if value < 0 {
            bytes.append(0x2D)
            digits(value.magnitude)
        } else {
            digits(UInt64(value))
        }
        needsComma = true
    }

    mutating func uint(_ value: UInt64) {
        separate()
        digits(value)
        needsComma = true
    }

    mutating func double(_ value: Double) {
        separate()
        if !value.isFinite {
            bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        } else if value.magnitude < 1e15, value == value.rounded(.towardZero), !(value == 0 && value.sign == .minus) {
            let integral = Int64(value)
            if integral < 0 { bytes.append(0x2D) }
            digits(integral.magnitude)
            bytes.append(0x2E)
            bytes.append(0x30)
        } else {
            var text = value.description
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        needsComma = true
    }

    mutating func bool(_ value: Bool) {
        separate()
        if value {
            bytes.append(contentsOf: [0x74, 0x72, 0x75, 0x65])
        } else {
            bytes.append(contentsOf: [0x66, 0x61, 0x6C, 0x73, 0x65])
        }
        needsComma = true
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
        needsComma = true
    }

    // MARK: Fields

    mutating func field(_ key: StaticString, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    mutating func field(_ key: StaticString, _ value: Int64) {
        self.key(key)
        int(value)
    }

    // MARK: Internals

    @inline(__always)
    private mutating func separate() {
        if needsComma { bytes.append(0x2C) }
    }

    private mutating func quoted(_ text: String) {
        bytes.append(0x22)
        var text = text
        text.withUTF8 { escape($0) }
        bytes.append(0x22)
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func escape(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        var runStart = 0
        var index = 0
        while index < count {
            let byte = base[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                index += 1
                continue
            }
            if index > runStart {
                bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: index - runStart))
            }
            bytes.append(0x5C)
            switch byte {
            case 0x22: bytes.append(0x22)
            case 0x5C: bytes.append(0x5C)
            case 0x08: bytes.append(0x62)
            case 0x0C: bytes.append(0x66)
            case 0x0A: bytes.append(0x6E)
            case 0x0D: bytes.append(0x72)
            case 0x09: bytes.append(0x74)
            default:
                bytes.append(contentsOf: [0x75, 0x30, 0x30, Self.hex[Int(byte >> 4)], Self.hex[Int(byte & 0x0F)]])
            }
            index += 1
            runStart = index
        }
        if count > runStart {
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart))
        }
    }

    private mutating func digits(_ value: UInt64) {
        if value < 10 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { raw in
            let digits = raw.bindMemory(to: UInt8.self)
            var position = 24
            var rest = value
            repeat {
                let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
                position -= 1
                digits[position] = 0x30 &+ UInt8(truncatingIfNeeded: remainder)
                rest = quotient
            } while rest != 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position...]))
        }
    }
}
