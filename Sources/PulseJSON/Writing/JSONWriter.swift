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
///
/// The output lives in a buffer the writer owns; ``bytes`` copies it out (once, at the end, is the
/// intended use). ``count`` is the cheap way to ask for the size so far.
public struct JSONWriter: Sendable {
    private var buffer: JSONOutputBuffer
    /// Whether U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are escaped (for output that
    /// may be embedded in JavaScript source). Off by default.
    public var escapesLineSeparators: Bool
    /// Whether the next value or key must be preceded by a comma.
    private var needsComma = false

    /// Creates a writer with room for `capacity` bytes before it must grow.
    public init(capacity: Int = 1024, escapesLineSeparators: Bool = false) {
        buffer = JSONOutputBuffer(capacity: capacity)
        self.escapesLineSeparators = escapesLineSeparators
    }

    /// The encoded bytes so far (a copy of the writer's buffer).
    ///
    /// Setting it replaces the output and starts a new top-level value (no comma is inserted
    /// before the next value).
    public var bytes: [UInt8] {
        get { buffer.array }
        set {
            buffer = JSONOutputBuffer(capacity: newValue.count + 64)
            newValue.withUnsafeBufferPointer { buffer.append($0) }
            needsComma = false
        }
    }

    /// The number of bytes written so far.
    public var count: Int { buffer.count }

    /// Clears the output, keeping its capacity, to encode another document.
    public mutating func reset() {
        unique().count = 0
        needsComma = false
    }

    // MARK: Structure

    /// Opens an object (`{`).
    public mutating func beginObject() {
        let buffer = unique()
        if needsComma { buffer.append(UInt8(ascii: ",")) }
        buffer.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Closes the innermost object (`}`).
    public mutating func endObject() {
        unique().append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Opens an array (`[`).
    public mutating func beginArray() {
        let buffer = unique()
        if needsComma { buffer.append(UInt8(ascii: ",")) }
        buffer.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Closes the innermost array (`]`).
    public mutating func endArray() {
        unique().append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes an object key and its colon; the member's value must follow.
    public mutating func key(_ key: String) {
        writeString(key, colon: true)
        needsComma = false
    }

    // MARK: Scalars

    /// Writes a string value.
    public mutating func string(_ value: String) {
        writeString(value, colon: false)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int64) {
        writeInteger(value.magnitude, negative: value < 0)
        needsComma = true
    }

    /// Writes an integer value.
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes an unsigned integer value.
    public mutating func uint(_ value: UInt64) {
        writeInteger(value, negative: false)
        needsComma = true
    }

    /// Writes a floating-point value; NaN and infinities are written as `null`.
    public mutating func double(_ value: Double) {
        writeDouble(value)
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        if value {
            writeLiteral(0x74, 0x72, 0x75, 0x65)  // true
        } else {
            writeLiteral(0x66, 0x61, 0x6C, 0x73, 0x65)  // false
        }
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        writeLiteral(0x6E, 0x75, 0x6C, 0x6C)
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
    //
    // Every public call checks once that the buffer is not shared (copy-on-write), reserves room
    // for its whole token (comma, quotes, escapes, digits, colon) and stores bytes directly. String
    // contents are scanned eight bytes at a time for the few bytes that need escaping.

    /// Strings up to this many UTF-8 bytes reserve their worst-case escaped size at once; longer
    /// ones are escaped in chunks of this size.
    private static let chunkLimit = 512

    /// The buffer, copied first if another writer value shares it.
    @inline(__always)
    private mutating func unique() -> JSONOutputBuffer {
        if !isKnownUniquelyReferenced(&buffer) { buffer = buffer.copy() }
        return buffer
    }

    /// Writes up to `capacity` bytes produced by `fill` (which returns how many it wrote), with
    /// the pending comma in front.
    @inline(__always)
    private mutating func emit(capacity: Int, _ fill: (UnsafeMutablePointer<UInt8>) -> Int) {
        let buffer = unique()
        var out = buffer.reserve(capacity + 1)
        var written = 0
        if needsComma {
            out.pointee = UInt8(ascii: ",")
            out += 1
            written = 1
        }
        buffer.count += written + fill(out)
    }

    private mutating func writeLiteral(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, _ e: UInt8? = nil) {
        emit(capacity: 5) { out in
            out[0] = a
            out[1] = b
            out[2] = c
            out[3] = d
            guard let e else { return 4 }
            out[4] = e
            return 5
        }
    }

    /// Writes the decimal digits of `value` at `out`; returns how many.
    @inline(__always)
    private static func writeDigits(_ value: UInt64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var digits = 1
        var probe = value
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var position = digits
        var rest = value
        repeat {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
            position -= 1
            out[position] = 0x30 &+ UInt8(truncatingIfNeeded: remainder)
            rest = quotient
        } while rest != 0
        return digits
    }

    private mutating func writeInteger(_ magnitude: UInt64, negative: Bool) {
        emit(capacity: 21) { out in
            guard negative else { return Self.writeDigits(magnitude, to: out) }
            out[0] = UInt8(ascii: "-")
            return 1 + Self.writeDigits(magnitude, to: out + 1)
        }
    }

    private mutating func writeDouble(_ value: Double) {
        guard value.isFinite else {
            writeLiteral(0x6E, 0x75, 0x6C, 0x6C)
            return
        }
        // Integral values of moderate size: digits plus ".0", exactly what `description` prints.
        if value.magnitude < 1e15, let integral = exactInt64(value), !(integral == 0 && value.sign == .minus) {
            emit(capacity: 20) { out in
                var length = 0
                if integral < 0 {
                    out[0] = UInt8(ascii: "-")
                    length = 1
                }
                length += Self.writeDigits(integral.magnitude, to: out + length)
                out[length] = UInt8(ascii: ".")
                out[length + 1] = UInt8(ascii: "0")
                return length + 2
            }
            return
        }
        var text = value.description
        text.withUTF8 { utf8 in
            emit(capacity: utf8.count) { out in
                out.update(from: utf8.baseAddress!, count: utf8.count)
                return utf8.count
            }
        }
    }

    /// Writes `"…"` (with the pending comma, and a colon after it for keys).
    private mutating func writeString(_ text: String, colon: Bool) {
        if let done = text.utf8.withContiguousStorageIfAvailable({ writeString(utf8: $0, colon: colon) }) {
            return done
        }
        var copy = text
        copy.withUTF8 { writeString(utf8: $0, colon: colon) }
    }

    private mutating func writeString(utf8: UnsafeBufferPointer<UInt8>, colon: Bool) {
        let separators = escapesLineSeparators
        if utf8.count <= Self.chunkLimit {
            // Worst case: every byte becomes a six-byte \u00XX escape.
            emit(capacity: utf8.count * 6 + 3) { out in
                out[0] = UInt8(ascii: "\"")
                var length = 1 + Self.escape(utf8, into: out + 1, separators: separators)
                out[length] = UInt8(ascii: "\"")
                length += 1
                if colon {
                    out[length] = UInt8(ascii: ":")
                    length += 1
                }
                return length
            }
            return
        }
        emit(capacity: 1) { out in
            out[0] = UInt8(ascii: "\"")
            return 1
        }
        // Long strings: escape chunk by chunk, so the buffer grows with the output, not 6x the input.
        var start = 0
        while start < utf8.count {
            var end = min(start + Self.chunkLimit, utf8.count)
            // Cut on a character boundary so no multi-byte sequence (U+2028!) spans two chunks.
            while end < utf8.count, utf8[end] & 0xC0 == 0x80 { end -= 1 }
            let chunk = UnsafeBufferPointer(rebasing: utf8[start..<end])
            let out = buffer.reserve(chunk.count * 6)
            buffer.count += Self.escape(chunk, into: out, separators: separators)
            start = end
        }
        buffer.append(UInt8(ascii: "\""))
        if colon { buffer.append(UInt8(ascii: ":")) }
    }

    /// Whether any of the eight bytes in `word` is below 0x20, `"`, `\\` or (with `separators`)
    /// 0xE2, the lead byte of U+2028/U+2029. May report a false positive, never a false negative.
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64, separators: Bool) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        var found = control | ((quote &- ones) & ~quote & highs) | ((backslash &- ones) & ~backslash & highs)
        if separators {
            let lead = word ^ (ones &* 0xE2)
            found |= (lead &- ones) & ~lead & highs
        }
        return found != 0
    }

    /// Writes the escaped form of `utf8` to `out` (room for `6 * utf8.count` bytes); returns its length.
    private static func escape(
        _ utf8: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>, separators: Bool
    ) -> Int {
        guard let base = utf8.baseAddress else { return 0 }
        let count = utf8.count
        var written = 0
        var runStart = 0
        var i = 0
        while i < count {
            if i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if !mayNeedEscape(word, separators: separators) {
                    i += 8
                    continue
                }
            } else {
                // The tail (under eight bytes): pad a word with harmless "a"s and test it at once.
                var word: UInt64 = 0x6161_6161_6161_6161
                withUnsafeMutableBytes(of: &word) { raw in
                    raw.baseAddress!.copyMemory(from: base + i, byteCount: count - i)
                }
                if !mayNeedEscape(word, separators: separators) { break }
            }
            let byte = base[i]
            guard byte < 0x20 || byte == 0x22 || byte == 0x5C || (separators && byte == 0xE2) else {
                i += 1
                continue
            }
            if byte == 0xE2 {
                // U+2028/U+2029 are E2 80 A8 / E2 80 A9; other E2 sequences pass through.
                guard i + 2 < count, base[i + 1] == 0x80, base[i + 2] == 0xA8 || base[i + 2] == 0xA9 else {
                    i += 1
                    continue
                }
                (out + written).update(from: base + runStart, count: i - runStart)
                written += i - runStart
                out[written] = UInt8(ascii: "\\")
                out[written + 1] = UInt8(ascii: "u")
                out[written + 2] = UInt8(ascii: "2")
                out[written + 3] = UInt8(ascii: "0")
                out[written + 4] = UInt8(ascii: "2")
                out[written + 5] = base[i + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9")
                written += 6
                i += 3
                runStart = i
                continue
            }
            (out + written).update(from: base + runStart, count: i - runStart)
            written += i - runStart
            out[written] = UInt8(ascii: "\\")
            switch byte {
            case 0x22: out[written + 1] = UInt8(ascii: "\"")
            case 0x5C: out[written + 1] = UInt8(ascii: "\\")
            case 0x08: out[written + 1] = UInt8(ascii: "b")
            case 0x0C: out[written + 1] = UInt8(ascii: "f")
            case 0x0A: out[written + 1] = UInt8(ascii: "n")
            case 0x0D: out[written + 1] = UInt8(ascii: "r")
            case 0x09: out[written + 1] = UInt8(ascii: "t")
            default:
                out[written + 1] = UInt8(ascii: "u")
                out[written + 2] = UInt8(ascii: "0")
                out[written + 3] = UInt8(ascii: "0")
                out[written + 4] = hexDigit(byte >> 4)
                out[written + 5] = hexDigit(byte & 0xF)
                written += 4
            }
            written += 2
            i += 1
            runStart = i
        }
        (out + written).update(from: base + runStart, count: count - runStart)
        return written + count - runStart
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble  // 0x57 + 10 == "a"
    }
}
