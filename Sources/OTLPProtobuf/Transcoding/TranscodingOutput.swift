import PulseJSON

/// Where the ``Transcoder`` writes the OTLP/JSON form of a message: JSON text (``JSONWriter``) or
/// the parsed-document model the gateway's mapping walks (``JSONDocumentBuilder``).
///
/// The calls are made in document order, as for a JSON writer; strings are valid UTF-8.
protocol TranscodingOutput {
    /// An empty output for transcoding `bytes` of input, growing beyond `limit` only to fail.
    static func sized(forInput bytes: Int, limit: Int) -> Self
    /// An empty output, for validating a value that is not written.
    static func scratch() -> Self
    /// What ``count`` measures, for the ``OTLPProtobufError/Code/outputTooLarge`` message.
    static var measure: StaticString { get }
    /// Whether the transcoder first tries writing the request in one pass, in wire order
    /// (starting over with ``reset()`` when it cannot), before its two-pass path.
    static var writesInOrder: Bool { get }
    /// The output's size so far, compared with ``OTLPProtobufLimits/maxOutputBytes``.
    var count: Int { get }
    /// Drops everything written, keeping the room, to start the output over.
    mutating func reset()
    mutating func beginObject()
    mutating func endObject()
    mutating func beginArray()
    mutating func endArray()
    mutating func key(_ name: StaticString)
    mutating func string(utf8 value: UnsafeBufferPointer<UInt8>)
    mutating func string(_ value: String)
    /// A 64-bit integer as a decimal string.
    mutating func string(decimal value: Int64)
    mutating func string(decimal value: UInt64)
    /// A `bytes` field as lowercase hex text (trace and span ids).
    mutating func hexString(_ bytes: UnsafeBufferPointer<UInt8>)
    /// A `bytes` field as base64 text.
    mutating func base64String(_ bytes: UnsafeBufferPointer<UInt8>)
    mutating func int(_ value: Int64)
    mutating func uint(_ value: UInt64)
    mutating func double(_ value: Double)
    mutating func bool(_ value: Bool)
}

extension JSONWriter: TranscodingOutput {
    static func sized(forInput bytes: Int, limit: Int) -> JSONWriter {
        // OTLP/JSON is typically 2-3 times the size of the protobuf.
        JSONWriter(capacity: min(bytes * 3, limit) + 64)
    }

    static func scratch() -> JSONWriter { JSONWriter(capacity: 256) }
    static var measure: StaticString { "JSON output" }
    /// JSON text always takes the two-pass path: the tools' and tests' output stays an independent
    /// check of the one-pass path the gateway's documents take (the protobuf fuzzer compares them).
    static var writesInOrder: Bool { false }

    mutating func key(_ name: StaticString) {
        name.withUTF8Buffer { key(utf8: $0) }
    }

    mutating func string(decimal value: Int64) { string(String(value)) }

    mutating func string(decimal value: UInt64) { string(String(value)) }

    mutating func hexString(_ bytes: UnsafeBufferPointer<UInt8>) { string(BinaryText.hex(bytes)) }

    mutating func base64String(_ bytes: UnsafeBufferPointer<UInt8>) { string(BinaryText.base64(bytes)) }
}

extension JSONDocumentBuilder: TranscodingOutput {
    static func sized(forInput bytes: Int, limit: Int) -> JSONDocumentBuilder {
        // A field takes at least two bytes; hex ids and decimal strings double their bytes.
        JSONDocumentBuilder(nodes: min(bytes / 4, limit / 16) + 16, stringBytes: min(bytes * 2, limit) + 64)
    }

    static func scratch() -> JSONDocumentBuilder { JSONDocumentBuilder(nodes: 16, stringBytes: 64) }
    static var measure: StaticString { "decoded document" }
    static var writesInOrder: Bool { true }
    var count: Int { byteCount }

    mutating func hexString(_ bytes: UnsafeBufferPointer<UInt8>) {
        string(byteCount: bytes.count * 2) { BinaryText.writeHex(bytes, into: $0) }
    }

    mutating func base64String(_ bytes: UnsafeBufferPointer<UInt8>) {
        string(byteCount: BinaryText.base64Count(bytes.count)) { BinaryText.writeBase64(bytes, into: $0) }
    }
}
