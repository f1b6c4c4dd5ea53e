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
/// The output grows in one buffer the writer owns (written through its pointer, no per-token array
/// bookkeeping); ``bytes`` returns a copy of it as a `[UInt8]`, ``withBytes(_:)`` lends it. Besides
/// `String`s, keys and strings can come as raw UTF-8 buffers (``key(utf8:)``, ``string(utf8:)``), so
/// text read from a parsed document is copied once, straight into the output, and already encoded
/// JSON can be spliced in with ``raw(_:)``; constant keys that need no escaping can be copied as they
/// are (``key(verbatim:)``). Each write checks that no copy of the writer shares the output (copies
/// share it until one of them writes); ``withRun(_:)`` writes a run of tokens with that check done
/// once. This is the one JSON writer of the project: the Pulse wire writers (`PulseProtocol`), the
/// gateway's mapping and answers, the logs.
public struct JSONWriter: Sendable {
    @usableFromInline var buffer: JSONOutputBuffer
    /// How many of the buffer's bytes are this writer's output (kept here, not in the shared
    /// allocation, so that writing needs no exclusivity check on a class property).
    @usableFromInline var length = 0
    /// Whether U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are escaped (for output that
    /// may be embedded in JavaScript source). Off by default.
    public var escapesLineSeparators: Bool
    /// Whether the next value or key must be preceded by a comma.
    @usableFromInline var needsComma = false

    /// Creates a writer with room for `capacity` bytes before it must grow.
    @inlinable
    public init(capacity: Int = 1024, escapesLineSeparators: Bool = false) {
        buffer = JSONOutputBuffer(capacity: capacity)
        self.escapesLineSeparators = escapesLineSeparators
    }

    /// The encoded bytes so far (a copy).
    ///
    /// Setting it replaces the output and starts a new top-level value (no comma is inserted
    /// before the next value).
    public var bytes: [UInt8] {
        get { [UInt8](UnsafeBufferPointer(start: buffer.base, count: length)) }
        set {
            buffer = JSONOutputBuffer(copying: newValue)
            length = newValue.count
            needsComma = false
        }
    }

    /// Calls `body` with the encoded bytes so far, without copying them.
    @inlinable
    public func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try body(UnsafeBufferPointer(start: buffer.base, count: length))
    }

    /// The number of bytes written so far.
    @inlinable
    public var count: Int { length }

    /// Clears the output, keeping its capacity, to encode another document.
    @inlinable
    public mutating func reset() {
        length = 0
        needsComma = false
    }

    // MARK: Structure

    /// Opens an object (`{`).
    @inlinable
    public mutating func beginObject() {
        unshare()
        writeOpen(UInt8(ascii: "{"))
    }

    /// Closes the innermost object (`}`).
    @inlinable
    public mutating func endObject() {
        unshare()
        writeClose(UInt8(ascii: "}"))
    }

    /// Opens an array (`[`).
    @inlinable
    public mutating func beginArray() {
        unshare()
        writeOpen(UInt8(ascii: "["))
    }

    /// Closes the innermost array (`]`).
    @inlinable
    public mutating func endArray() {
        unshare()
        writeClose(UInt8(ascii: "]"))
    }

    /// Writes an object key and its colon; the member's value must follow.
    @inlinable
    public mutating func key(_ key: String) {
        unshare()
        quotedToken(key, colon: true)
    }

    /// Writes an object key given as UTF-8 (for example straight from a parsed document) and its colon.
    @inlinable
    public mutating func key(utf8 key: UnsafeBufferPointer<UInt8>) {
        unshare()
        quotedToken(utf8: key, colon: true)
    }

    /// Writes a constant object key and its colon, the literal's bytes copied as they are: for keys
    /// known to need no escaping (no `"`, `\\`, control character or byte 0xE2, the lead byte of
    /// U+2028/U+2029; checked in debug builds), which skips the escape scan of ``key(utf8:)``. The
    /// bytes are the same.
    ///
    /// ```swift
    /// writer.key(verbatim: "timestamp")  // "timestamp":
    /// ```
    @inlinable @inline(__always)
    public mutating func key(verbatim key: StaticString) {
        unshare()
        writeKey(verbatim: key)
    }

    /// Appends an already encoded JSON value as it is (the caller vouches that it is JSON).
    @inlinable
    public mutating func raw(_ json: [UInt8]) {
        json.withUnsafeBufferPointer { raw(utf8: $0) }
    }

    /// Appends the output of another writer as it is (one encoded JSON value), without copying it
    /// out first.
    @inlinable
    public mutating func raw(_ json: JSONWriter) {
        json.withBytes { raw(utf8: $0) }
    }

    /// Appends already encoded JSON given as UTF-8 as it is (the caller vouches that it is JSON).
    @inlinable
    public mutating func raw(utf8 json: UnsafeBufferPointer<UInt8>) {
        unshare()
        writeRaw(utf8: json)
    }

    // MARK: Scalars

    /// Writes a string value.
    @inlinable
    public mutating func string(_ value: String) {
        unshare()
        quotedToken(value, colon: false)
    }

    /// Writes a string value given as UTF-8 (for example straight from a parsed document).
    @inlinable
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        unshare()
        quotedToken(utf8: value, colon: false)
    }

    /// Writes an integer value.
    @inlinable
    public mutating func int(_ value: Int64) {
        unshare()
        appendInteger(value.magnitude, negative: value < 0)
    }

    /// Writes an integer value.
    @inlinable
    public mutating func int(_ value: Int) {
        int(Int64(value))
    }

    /// Writes an unsigned integer value.
    @inlinable
    public mutating func uint(_ value: UInt64) {
        unshare()
        appendInteger(value, negative: false)
    }

    /// Writes a floating-point value; NaN and infinities are written as `null`.
    @inlinable
    public mutating func double(_ value: Double) {
        unshare()
        appendDouble(value)
    }

    /// Writes `true` or `false`.
    @inlinable
    public mutating func bool(_ value: Bool) {
        unshare()
        writeBool(value)
    }

    /// Writes `null`.
    @inlinable
    public mutating func null() {
        unshare()
        writeNull()
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
    @inlinable
    public mutating func field(_ key: String, _ value: String?) {
        self.key(key)
        if let value { string(value) } else { null() }
    }

    /// Writes a member whose value is an integer, or `null` for `nil`.
    @inlinable
    public mutating func field(_ key: String, _ value: Int64?) {
        self.key(key)
        if let value { int(value) } else { null() }
    }

    /// Writes a member whose value is an integer, or `null` for `nil`.
    @inlinable
    public mutating func field(_ key: String, _ value: Int?) {
        self.key(key)
        if let value { int(Int64(value)) } else { null() }
    }

    /// Writes a member whose value is an unsigned integer, or `null` for `nil`.
    @inlinable
    public mutating func field(_ key: String, _ value: UInt64?) {
        self.key(key)
        if let value { uint(value) } else { null() }
    }

    /// Writes a member whose value is a double (non-finite as `null`), or `null` for `nil`.
    @inlinable
    public mutating func field(_ key: String, _ value: Double?) {
        self.key(key)
        if let value { double(value) } else { null() }
    }

    /// Writes a member whose value is a Boolean, or `null` for `nil`.
    @inlinable
    public mutating func field(_ key: String, _ value: Bool?) {
        self.key(key)
        if let value { bool(value) } else { null() }
    }

    /// Writes a member whose value is a value tree, or `null` for `nil`.
    public mutating func field(_ key: String, _ value: JSONValue?) {
        self.key(key)
        if let value { self.value(value) } else { null() }
    }

    // MARK: Containers as members

    /// Writes a member whose value is an object with the members `body` writes.
    @inlinable
    public mutating func object(_ key: String, _ body: (inout JSONWriter) -> Void) {
        self.key(key)
        beginObject()
        body(&self)
        endObject()
    }

    /// Writes a member whose value is an array of one object per element, with the members `body`
    /// writes for it.
    @inlinable
    public mutating func objects<Elements: Sequence>(
        _ key: String, _ elements: Elements, _ body: (inout JSONWriter, Elements.Element) -> Void
    ) {
        self.key(key)
        beginArray()
        for element in elements {
            beginObject()
            body(&self, element)
            endObject()
        }
        endArray()
    }

    /// Writes a member whose value is an object with one object member per element, named
    /// `name(element)`, with the members `body` writes for it.
    @inlinable
    public mutating func objects<Elements: Sequence>(
        _ key: String, _ elements: Elements, named name: (Elements.Element) -> String,
        _ body: (inout JSONWriter, Elements.Element) -> Void
    ) {
        object(key) { writer in
            for element in elements {
                writer.object(name(element)) { body(&$0, element) }
            }
        }
    }

    /// Writes a member whose value is an array of strings.
    @inlinable
    public mutating func strings(_ key: String, _ values: some Sequence<String>) {
        self.key(key)
        beginArray()
        for value in values { string(value) }
        endArray()
    }

    // MARK: Write runs

    /// Calls `body` with a ``Run`` that writes into this writer's output: a run of tokens written
    /// with one check, on entry, that no copy of the writer shares the output (a shared output is
    /// copied first), instead of one per token. Every write still checks for room, and the output
    /// grows inside a run as it does outside. The bytes are those the writer's own methods write.
    ///
    /// ```swift
    /// writer.withRun { run in
    ///     run.beginObject()
    ///     run.key(verbatim: "id")
    ///     run.string(id)
    ///     run.endObject()
    /// }
    /// ```
    ///
    /// The writer itself cannot be used, or copied, while `body` runs (the run holds it, and `body`
    /// has exclusive access to the run, which cannot be copied): that is what makes the one check
    /// enough. Commas are inserted across the run's start and end as between any two writes.
    @inlinable @inline(__always)
    public mutating func withRun<Result, Failure: Error>(
        _ body: (inout Run) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        unshare()
        var run = Run(consume self)
        do {
            let result = try body(&run)
            self = run.finish()
            return result
        } catch {
            self = run.finish()
            throw error
        }
    }

    /// A run of writes into a ``JSONWriter``'s output, lent by ``JSONWriter/withRun(_:)``, which
    /// checked once that the output is not shared: the writer's token methods without that check
    /// per token (the same code: the writer's own methods are the run's after the check).
    public struct Run: ~Copyable {
        /// The writer, moved in for the run and back out after it; its output is not shared.
        @usableFromInline var writer: JSONWriter

        @inlinable @inline(__always)
        init(_ writer: consuming JSONWriter) { self.writer = writer }

        /// The writer, its output as the run left it.
        @inlinable @inline(__always)
        consuming func finish() -> JSONWriter { writer }

        /// The number of bytes the writer has written so far.
        @inlinable
        public var count: Int { writer.length }

        /// ``JSONWriter/beginObject()``.
        @inlinable
        public mutating func beginObject() { writer.writeOpen(UInt8(ascii: "{")) }

        /// ``JSONWriter/endObject()``.
        @inlinable
        public mutating func endObject() { writer.writeClose(UInt8(ascii: "}")) }

        /// ``JSONWriter/beginArray()``.
        @inlinable
        public mutating func beginArray() { writer.writeOpen(UInt8(ascii: "[")) }

        /// ``JSONWriter/endArray()``.
        @inlinable
        public mutating func endArray() { writer.writeClose(UInt8(ascii: "]")) }

        /// ``JSONWriter/key(_:)``.
        @inlinable
        public mutating func key(_ key: String) { writer.quotedToken(key, colon: true) }

        /// ``JSONWriter/key(utf8:)``.
        @inlinable
        public mutating func key(utf8 key: UnsafeBufferPointer<UInt8>) { writer.quotedToken(utf8: key, colon: true) }

        /// ``JSONWriter/key(verbatim:)``: a key known to need no escaping, copied as it is.
        @inlinable @inline(__always)
        public mutating func key(verbatim key: StaticString) { writer.writeKey(verbatim: key) }

        /// ``JSONWriter/raw(utf8:)``.
        @inlinable
        public mutating func raw(utf8 json: UnsafeBufferPointer<UInt8>) { writer.writeRaw(utf8: json) }

        /// ``JSONWriter/string(_:)``.
        @inlinable
        public mutating func string(_ value: String) { writer.quotedToken(value, colon: false) }

        /// ``JSONWriter/string(utf8:)``.
        @inlinable
        public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
            writer.quotedToken(utf8: value, colon: false)
        }

        /// ``JSONWriter/int(_:)-(Int64)``.
        @inlinable
        public mutating func int(_ value: Int64) { writer.appendInteger(value.magnitude, negative: value < 0) }

        /// ``JSONWriter/uint(_:)``.
        @inlinable
        public mutating func uint(_ value: UInt64) { writer.appendInteger(value, negative: false) }

        /// ``JSONWriter/double(_:)``.
        @inlinable
        public mutating func double(_ value: Double) { writer.appendDouble(value) }

        /// ``JSONWriter/bool(_:)``.
        @inlinable
        public mutating func bool(_ value: Bool) { writer.writeBool(value) }

        /// ``JSONWriter/null()``.
        @inlinable
        public mutating func null() { writer.writeNull() }
    }

    // MARK: Internals
    //
    // Bytes are stored through the buffer's pointer after one check for room; whether the buffer is
    // shared (then it is copied first) is checked once before: per token by the public methods, per
    // run by `withRun`. String contents are scanned eight bytes at a time for the few bytes that
    // need escaping, and the runs between them are copied with one copy each.

    /// Copies the output first when a copy of this writer shares it: what makes the writes below
    /// safe (they check only for room).
    @inlinable @inline(__always)
    mutating func unshare() { buffer.unshare(after: length) }

    /// Room for `count` more bytes in a buffer this writer alone holds (checked by ``unshare()``);
    /// returns where they go.
    @inlinable @inline(__always)
    mutating func reserve(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        buffer.reserve(unshared: count, after: length)
    }

    // The tokens, into an unshared buffer: the one implementation of each (these, the quoted
    // tokens, the integers and doubles below), behind both the writer's methods and a run's.

    /// The pending comma and `{` or `[`.
    @inlinable @inline(__always)
    mutating func writeOpen(_ bracket: UInt8) {
        appendSeparated(bracket)
        needsComma = false
    }

    /// `}` or `]`.
    @inlinable @inline(__always)
    mutating func writeClose(_ bracket: UInt8) {
        append(bracket)
        needsComma = true
    }

    /// The pending comma, `"`, the key's bytes as they are and `":` (the same stores as
    /// ``quotedToken(utf8:colon:)`` without the scan).
    @inlinable @inline(__always)
    mutating func writeKey(verbatim key: StaticString) {
        assert(key.withUTF8Buffer { !$0.contains(where: { Self.needsEscape($0, separators: true) }) })
        key.withUTF8Buffer { utf8 in
            let count = utf8.count
            let out = reserve(count &+ 4)
            let comma = needsComma
            UnsafeMutableRawPointer(out).storeBytes(
                of: (comma ? 0x222C as UInt16 : 0x2222).littleEndian, as: UInt16.self)
            let written = comma ? 2 : 1
            if let base = utf8.baseAddress { (out + written).update(from: base, count: count) }
            UnsafeMutableRawPointer(out + (written &+ count)).storeBytes(
                of: (0x3A22 as UInt16).littleEndian, as: UInt16.self)
            length &+= written &+ count &+ 2
        }
        needsComma = false
    }

    @inlinable @inline(__always)
    mutating func writeRaw(utf8 json: UnsafeBufferPointer<UInt8>) {
        separate()
        append(json)
        needsComma = true
    }

    @inlinable @inline(__always)
    mutating func writeBool(_ value: Bool) {
        separate()
        if value {
            appendLiteral(0x74, 0x72, 0x75, 0x65)  // true
        } else {
            appendLiteral(0x66, 0x61, 0x6C, 0x73)  // fals
            append(0x65)  // e
        }
        needsComma = true
    }

    @inlinable @inline(__always)
    mutating func writeNull() {
        separate()
        appendLiteral(0x6E, 0x75, 0x6C, 0x6C)
        needsComma = true
    }

    @inlinable @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1).pointee = byte
        length += 1
    }

    @inlinable @inline(__always)
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count).update(from: source, count: bytes.count)
        length += bytes.count
    }

    /// The pending comma, then `byte`.
    @inlinable @inline(__always)
    mutating func appendSeparated(_ byte: UInt8) {
        let out = reserve(2)
        var written = 0
        if needsComma {
            out[0] = UInt8(ascii: ",")
            written = 1
        }
        out[written] = byte
        length += written + 1
    }

    @inlinable @inline(__always)
    mutating func separate() {
        if needsComma { append(UInt8(ascii: ",")) }
    }

    @inlinable @inline(__always)
    mutating func appendLiteral(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        let out = reserve(4)
        out[0] = a
        out[1] = b
        out[2] = c
        out[3] = d
        length += 4
    }

    /// The pending comma, `"…"` with the contents escaped, and a colon after keys (a key's value
    /// follows without a comma, a string is followed by one).
    @inlinable
    mutating func quotedToken(_ text: String, colon: Bool) {
        if text.utf8.withContiguousStorageIfAvailable({ quotedToken(utf8: $0, colon: colon) }) == nil {
            var copy = text
            copy.withUTF8 { quotedToken(utf8: $0, colon: colon) }
        }
    }

    /// The pending comma, `"…"` with the UTF-8 contents escaped, and a colon after keys (the comma
    /// rule as ``quotedToken(_:colon:)``). The
    /// contents are copied into room reserved for the whole token while they are scanned, eight
    /// bytes at a time; only when a byte may need escaping is the token written again, escaped.
    @usableFromInline
    mutating func quotedToken(utf8: UnsafeBufferPointer<UInt8>, colon: Bool) {
        let count = utf8.count
        let out = reserve(count &+ 4)
        // The comma and the opening quote as one two-byte store, without a comma two quotes (the
        // second is overwritten by the contents or the closing quote); the same for the closing
        // quote and a key's colon: the room reserved for the token has space for both.
        let comma = needsComma
        UnsafeMutableRawPointer(out).storeBytes(of: (comma ? 0x222C as UInt16 : 0x2222).littleEndian, as: UInt16.self)
        var written = comma ? 2 : 1
        // The scan specialized for each setting, so that the words' check has no test for it.
        if let base = utf8.baseAddress,
            !(escapesLineSeparators
                ? Self.copyUnescaped(base, count: count, to: out + written, separators: true)
                : Self.copyUnescaped(base, count: count, to: out + written, separators: false))
        {
            quotedEscapedToken(utf8: utf8, colon: colon)
            return
        }
        written &+= count
        UnsafeMutableRawPointer(out + written).storeBytes(
            of: (colon ? 0x3A22 as UInt16 : 0x2222).littleEndian, as: UInt16.self)
        length &+= written &+ (colon ? 2 : 1)
        needsComma = !colon
    }

    /// ``quotedToken(utf8:colon:)`` for contents with a byte that may need escaping (kept out of
    /// line, so that the common path saves fewer registers).
    @inline(never)
    mutating func quotedEscapedToken(utf8: UnsafeBufferPointer<UInt8>, colon: Bool) {
        separate()
        append(UInt8(ascii: "\""))
        appendEscaped(utf8)
        append(UInt8(ascii: "\""))
        if colon { append(UInt8(ascii: ":")) }
        needsComma = !colon
    }

    /// Copies `count` bytes from `source` to `target` unless one of them may need escaping (below
    /// 0x20, `"`, `\\` or, with `separators`, 0xE2); returns whether it copied them all. The bytes
    /// are checked as 64-bit words: up to 16 as one or two overlapping words (under 8, the first and
    /// last four bytes, or the first, middle and last byte padded with spaces, as one word), longer
    /// contents eight bytes at a time, the last (up to) seven as a word that overlaps bytes already
    /// copied.
    @inline(__always)
    private static func copyUnescaped(
        _ source: UnsafePointer<UInt8>, count: Int, to target: UnsafeMutablePointer<UInt8>, separators: Bool
    ) -> Bool {
        let from = UnsafeRawPointer(source)
        let to = UnsafeMutableRawPointer(target)
        if count < 8 {
            if count >= 4 {
                let head = from.loadUnaligned(as: UInt32.self)
                let tail = from.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
                if mayNeedEscape(UInt64(head) | UInt64(tail) << 32, separators: separators) { return false }
                to.storeBytes(of: head, as: UInt32.self)
                to.storeBytes(of: tail, toByteOffset: count &- 4, as: UInt32.self)
            } else if count > 0 {
                let first = source[0]
                let middle = source[count >> 1]
                let last = source[count &- 1]
                let spaces: UInt64 = 0x2020_2020_2000_0000
                if mayNeedEscape(
                    UInt64(first) | UInt64(middle) << 8 | UInt64(last) << 16 | spaces, separators: separators)
                {
                    return false
                }
                target[0] = first
                target[count >> 1] = middle
                target[count &- 1] = last
            }
            return true
        }
        if count <= 16 {
            let head = from.loadUnaligned(as: UInt64.self)
            let tail = from.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
            if escapeMask(head, separators: separators) | escapeMask(tail, separators: separators) != 0 { return false }
            to.storeBytes(of: head, as: UInt64.self)
            to.storeBytes(of: tail, toByteOffset: count &- 8, as: UInt64.self)
            return true
        }
        var i = 0
        while true {
            let word = from.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            if mayNeedEscape(word, separators: separators) { return false }
            to.storeBytes(of: word, toByteOffset: i, as: UInt64.self)
            if i &+ 8 == count { return true }
            // The next word, or the one ending at the last byte.
            i = min(i &+ 8, count &- 8)
        }
    }

    /// The pending comma, a minus sign when `negative`, and the decimal digits of `magnitude`,
    /// with one append: a value (the next one gets a comma).
    @usableFromInline
    mutating func appendInteger(_ magnitude: UInt64, negative: Bool) {
        withDecimalText(magnitude, negative: negative, afterComma: needsComma) { append($0) }
        needsComma = true
    }

    /// The pending comma and the shortest form of `value` (`null` when it is not finite).
    @usableFromInline
    mutating func appendDouble(_ value: Double) {
        guard value.isFinite else { return writeNull() }
        defer { needsComma = true }
        // Integral values of moderate size: digits plus ".0", exactly what `description` prints.
        if value.magnitude < 1e15, let integral = exactInt64(value), !(integral == 0 && value.sign == .minus) {
            appendInteger(integral.magnitude, negative: integral < 0)
            append(UInt8(ascii: "."))
            append(UInt8(ascii: "0"))
            return
        }
        separate()
        var text = value.description
        text.withUTF8 { append($0) }
    }

    /// Whether any of the eight bytes in `word` is below 0x20, `"`, `\\` or (with `separators`)
    /// 0xE2, the lead byte of U+2028/U+2029. May report a false positive, never a false negative.
    @inline(__always)
    private static func mayNeedEscape(_ word: UInt64, separators: Bool) -> Bool {
        escapeMask(word, separators: separators) != 0
    }

    /// The high bit of each byte of `word` that may need escaping (nonzero exactly when
    /// ``mayNeedEscape(_:separators:)`` is true).
    @inline(__always)
    private static func escapeMask(_ word: UInt64, separators: Bool) -> UInt64 {
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
        return found
    }

    /// Appends the escaped form of `utf8` (without quotes).
    @usableFromInline
    mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        guard let base = utf8.baseAddress else { return }
        let separators = escapesLineSeparators
        let count = utf8.count
        var runStart = 0
        var i = 0
        while i < count {
            if i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if !Self.mayNeedEscape(word, separators: separators) {
                    i += 8
                    continue
                }
            }
            let byte = base[i]
            guard Self.needsEscape(byte, separators: separators) else {
                i += 1
                continue
            }
            if byte == 0xE2 {
                // U+2028/U+2029 are E2 80 A8 / E2 80 A9; other E2 sequences pass through.
                guard i + 2 < count, base[i + 1] == 0x80, base[i + 2] == 0xA8 || base[i + 2] == 0xA9 else {
                    i += 1
                    continue
                }
                append(UnsafeBufferPointer(start: base + runStart, count: i - runStart))
                appendLiteral(UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "2"), UInt8(ascii: "0"))
                append(UInt8(ascii: "2"))
                append(base[i + 2] == 0xA8 ? UInt8(ascii: "8") : UInt8(ascii: "9"))
                i += 3
                runStart = i
                continue
            }
            append(UnsafeBufferPointer(start: base + runStart, count: i - runStart))
            append(UInt8(ascii: "\\"))
            switch byte {
            case 0x22: append(UInt8(ascii: "\""))
            case 0x5C: append(UInt8(ascii: "\\"))
            case 0x08: append(UInt8(ascii: "b"))
            case 0x0C: append(UInt8(ascii: "f"))
            case 0x0A: append(UInt8(ascii: "n"))
            case 0x0D: append(UInt8(ascii: "r"))
            case 0x09: append(UInt8(ascii: "t"))
            default:
                appendLiteral(UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), Self.hexDigit(byte >> 4))
                append(Self.hexDigit(byte & 0xF))
            }
            i += 1
            runStart = i
        }
        append(UnsafeBufferPointer(start: base + runStart, count: count - runStart))
    }

    /// Whether `byte` is escaped, or (0xE2, with `separators`) may start a sequence that is: below
    /// 0x20, `"`, `\\`.
    @usableFromInline @inline(__always)
    static func needsEscape(_ byte: UInt8, separators: Bool) -> Bool {
        byte < 0x20 || byte == 0x22 || byte == 0x5C || (separators && byte == 0xE2)
    }

    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 &+ nibble : 0x57 &+ nibble  // 0x57 + 10 == "a"
    }
}

/// Calls `body` with the decimal text of `magnitude` (after a minus sign when `negative`, and a
/// comma before everything when `afterComma`), written on the stack: the one rendering of integers
/// for ``JSONWriter`` and ``JSONDocumentBuilder``. Two digits per division, from a table of the
/// hundred pairs `00`…`99`.
@inlinable @inline(__always)
func withDecimalText(
    _ magnitude: UInt64, negative: Bool, afterComma: Bool, _ body: (UnsafeBufferPointer<UInt8>) -> Void
) {
    var scratch: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    withUnsafeMutableBytes(of: &scratch) { raw in
        let pairs: StaticString = """
            0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849\
            5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899
            """
        let table = UnsafeRawPointer(pairs.utf8Start)
        var position = 32
        var rest = magnitude
        while rest >= 100 {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 100)
            position &-= 2
            let pair = table.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: remainder) &* 2, as: UInt16.self)
            raw.storeBytes(of: pair, toByteOffset: position, as: UInt16.self)
            rest = quotient
        }
        if rest >= 10 {
            position &-= 2
            let pair = table.loadUnaligned(fromByteOffset: Int(truncatingIfNeeded: rest) &* 2, as: UInt16.self)
            raw.storeBytes(of: pair, toByteOffset: position, as: UInt16.self)
        } else {
            position &-= 1
            raw[position] = 0x30 &+ UInt8(truncatingIfNeeded: rest)
        }
        if negative {
            position &-= 1
            raw[position] = UInt8(ascii: "-")
        }
        if afterComma {
            position &-= 1
            raw[position] = UInt8(ascii: ",")
        }
        let out = raw.bindMemory(to: UInt8.self)
        body(UnsafeBufferPointer(rebasing: out[position...]))
    }
}

/// The bytes a ``JSONWriter`` has written (and a ``JSONDocumentBuilder``'s node tape and strings):
/// one allocation (``JSONOutputStorage``, its room and its
/// bytes together) that the writer replaces by one of double the size when it must grow, shared
/// between copies of a writer until one of them writes (then that one copies it first). Each writer
/// keeps its own length; the bytes are never written once shared.
@usableFromInline
struct JSONOutputBuffer: @unchecked Sendable {
    // Sendable: the bytes are written only through the writer that holds the only reference.
    @usableFromInline var storage: JSONOutputStorage
    /// The first byte and how many fit, read from `storage` once.
    @usableFromInline let base: UnsafeMutablePointer<UInt8>
    @usableFromInline let room: Int

    /// A buffer with room for `capacity` bytes (at least 16).
    @usableFromInline
    init(capacity: Int) {
        let room = Swift.max(capacity, 16)
        storage = unsafeDowncast(
            JSONOutputStorage.create(minimumCapacity: room) { _ in room }, to: JSONOutputStorage.self)
        base = storage.withUnsafeMutablePointerToElements { $0 }
        self.room = room
    }

    /// A buffer holding `bytes`.
    init(copying bytes: [UInt8]) {
        self.init(capacity: bytes.count)
        bytes.withUnsafeBufferPointer { source in
            if let start = source.baseAddress { base.initialize(from: start, count: source.count) }
        }
    }

    /// Copies the buffer (keeping its room) when another holder shares it, so that the holder may
    /// write with ``reserve(unshared:after:)``.
    @inlinable @inline(__always)
    mutating func unshare(after length: Int) {
        if _slowPath(!isUniquelyReferenced()) { self = copy(length, minimumCapacity: room) }
    }

    /// Whether no other writer shares the bytes.
    @inlinable @inline(__always)
    mutating func isUniquelyReferenced() -> Bool { isKnownUniquelyReferenced(&storage) }

    /// Whether `count` more bytes fit after the first `length` in a buffer no other holder shares.
    @inlinable @inline(__always)
    mutating func canWrite(_ count: Int, after length: Int) -> Bool {
        room &- length >= count && isUniquelyReferenced()
    }

    /// Room for `count` more bytes after the first `length` (a full buffer is copied first), without
    /// the uniqueness check: for a holder that knows no other holder shares the buffer, because a
    /// check it made covers this one too (``JSONDocumentBuilder``'s tape covers its string arena).
    @inlinable @inline(__always)
    mutating func reserve(unshared count: Int, after length: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(room &- length < count) { self = copy(length, minimumCapacity: length + count) }
        return base + length
    }

    /// A buffer with the first `count` bytes of this one and room for at least `minimumCapacity`
    /// (at least double this one's room when it must grow). Out of line: the writes' slow path.
    @usableFromInline @inline(never)
    func copy(_ count: Int, minimumCapacity: Int) -> JSONOutputBuffer {
        let grown = minimumCapacity > room ? Swift.max(minimumCapacity, room * 2) : room
        let copy = JSONOutputBuffer(capacity: grown)
        copy.base.initialize(from: base, count: count)
        return copy
    }
}

/// The allocation behind a ``JSONOutputBuffer``: its room (the header), then the bytes.
@usableFromInline
final class JSONOutputStorage: ManagedBuffer<Int, UInt8> {}
