/// A fast, append-only JSON encoder producing compact UTF-8 (no whitespace).
///
/// Call the structural methods in document order; the writer inserts commas and colons itself:
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.field("name", "checkout")
/// writer.key("tags"); writer.beginArray(); writer.string("a"); writer.endArray()
/// writer.endObject()
/// // writer.bytes == Array(#"{"name":"checkout","tags":["a"]}"#.utf8)
/// ```
///
/// The writer does not validate nesting: inside an object every value must be preceded by
/// ``key(_:)`` and every begin must be matched by its end, otherwise the output is not JSON.
///
/// Format:
/// - Strings: `"` and `\` are escaped; control characters use `\b \f \n \r \t` or `\u00XX`
///   (lowercase hex); every other character is written as its UTF-8 bytes. U+2028 and U+2029 are
///   written as `\u2028`/`\u2029` only when ``escapesLineSeparators`` is on.
/// - Integers: exact decimal digits.
/// - Doubles: the shortest representation that parses back to the same `Double` (Swift's
///   `description`, e.g. `0.1`, `100.0`, `1e-05`, `1e+16`, `-0.0`); always valid JSON and always
///   read back as a double. Non-finite values (NaN, ±infinity) have no JSON form and are written
///   as `null`.
public struct JSONWriter: Sendable {
    /// The encoded bytes so far. Modifying them directly bypasses comma tracking.
    public var bytes: [UInt8]
    /// Whether U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are escaped (for output that
    /// may be embedded in JavaScript source). Off by default.
    public var escapesLineSeparators: Bool
    /// Whether the next value or key must be preceded by a comma.
    private var needsComma = false

    /// Creates a writer with room for `capacity` bytes before it must grow.
    public init(capacity: Int = 1024, escapesLineSeparators: Bool = false) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.escapesLineSeparators = escapesLineSeparators
    }

    /// Clears the output, keeping its capacity, to encode another document.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    // MARK: Structure

    /// Opens an object (`{`).
    public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Closes the innermost object (`}`).
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Opens an array (`[`).
    public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Closes the innermost array (`]`).
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key and its colon; the member's value must follow.
    public mutating func key(_ key: String) {
        separate()
        writeQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    // MARK: Scalars

    /// Writes a string value.
    public mutating func string(_ value: String) {
        separate()
        writeQuoted(value)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int64) {
        separate()
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            writeDigits(value.magnitude)
        } else {
            writeDigits(UInt64(value))
        }
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes an unsigned integer value.
    public mutating func uint(_ value: UInt64) {
        separate()
        writeDigits(value)
        needsComma = true
    }

    /// Writes a floating-point value; NaN and infinities are written as `null`.
    public mutating func double(_ value: Double) {
        separate()
        writeDouble(value)
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        if value {
            append4(0x74, 0x72, 0x75, 0x65)  // true
        } else {
            append4(0x66, 0x61, 0x6C, 0x73)  // fals
            bytes.append(0x65)  // e
        }
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        append4(0x6E, 0x75, 0x6C, 0x6C)
        needsComma = true
    }

    /// Writes a whole value tree.
    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .uint(let u): uint(u)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for member in members {
                key(member.key)
                self.value(member.value)
            }
            endObject()
        }
    }

    // MARK: Fields (key + value, nil as null)

    /// Writes a member whose value is a string, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    /// Writes a member whose value is an integer, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: Int64?) {
        self.key(key)
        if let value { int(value) } else { null() }
    }

    /// Writes a member whose value is an integer, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: Int?) {
        self.key(key)
        if let value { int(Int64(value)) } else { null() }
    }

    /// Writes a member whose value is an unsigned integer, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: UInt64?) {
        self.key(key)
        if let value { uint(value) } else { null() }
    }

    /// Writes a member whose value is a double (non-finite as `null`), or `null` for `nil`.
    public mutating func field(_ key: String, _ value: Double?) {
        self.key(key)
        if let value { double(value) } else { null() }
    }

    /// Writes a member whose value is a Boolean, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: Bool?) {
        self.key(key)
        if let value { bool(value) } else { null() }
    }

    /// Writes a member whose value is a value tree, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: JSONValue?) {
        self.key(key)
        if let value { self.value(value) } else { null() }
    }

    // MARK: Internals

    @inline(__always)
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    @inline(__always)
    private mutating func append4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        bytes.append(a)
        bytes.append(b)
        bytes.append(c)
        bytes.append(d)
    }

    private mutating func writeDigits(_ value: UInt64) {
        if value < 10 {
            bytes.append(0x30 &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // 20 digits hold UInt64.max.
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

    private mutating func writeDouble(_ value: Double) {
        guard value.isFinite else {
            append4(0x6E, 0x75, 0x6C, 0x6C)
            return
        }
        // Integral values of moderate size: digits plus ".0", exactly what `description` prints.
        if value.magnitude < 1e15, let integral = exactInt64(value), !(integral == 0 && value.sign == .minus) {
            if integral < 0 { bytes.append(UInt8(ascii: "-")) }
            writeDigits(integral.magnitude)
            bytes.append(UInt8(ascii: "."))
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var text = value.description
        text.withUTF8 { bytes.append(contentsOf: $0) }
    }

    /// Writes `"…"` with the escapes described in the type's documentation.
    private mutating func writeQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in writeEscaped(utf8) }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let count = utf8.count
        let escapeSeparators = escapesLineSeparators
        var runStart = 0
        var i = 0
        while i < count {
            let byte = base[i]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                // U+2028/U+2029 are E2 80 A8 / E2 80 A9.
                if byte == 0xE2 && escapeSeparators && i + 2 < count && base[i + 1] == 0x80
                    && (base[i + 2] == 0xA8 || base[i + 2] == 0xA9)
                {
                    flush(base, from: runStart, to: i)
                    append4(UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "2"), UInt8(ascii: "0"))
                    bytes.append(UInt8(ascii: "2"))
                    bytes.append(base[i + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9"))
                    i += 3
                    runStart = i
                    continue
                }
                i += 1
                continue
            }
            flush(base, from: runStart, to: i)
            writeEscape(byte)
            i += 1
            runStart = i
        }
        flush(base, from: runStart, to: count)
    }

    @inline(__always)
    private mutating func flush(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int) {
        if end > start {
            bytes.append(contentsOf: UnsafeBufferPointer(start: base + start, count: end - start))
        }
    }

    private mutating func writeEscape(_ byte: UInt8) {
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case 0x22: bytes.append(UInt8(ascii: "\""))
        case 0x5C: bytes.append(UInt8(ascii: "\\"))
        case 0x08: bytes.append(UInt8(ascii: "b"))
        case 0x0C: bytes.append(UInt8(ascii: "f"))
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            append4(UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)])
            bytes.append(hex[Int(byte & 0xF)])
        }
    }
}
