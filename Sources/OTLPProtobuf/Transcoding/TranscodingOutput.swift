import PulseJSON

/// Where the ``Transcoder`` writes the OTLP/JSON form of a message: JSON text (``JSONWriter``) or
/// the parsed-document model the gateway's mapping walks (``ExclusiveDocumentBuilder``).
///
/// The calls are made in document order, as for a JSON writer; strings are valid UTF-8. The
/// transcoder owns its output until it hands it over with ``finish()``, so an output need not be
/// copyable (the document builder is not: it writes without checking for sharing).
protocol TranscodingOutput: ~Copyable {
    /// What ``finish()`` gives: the JSON text or the document.
    associatedtype Result
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
    /// The finished output, once every container is closed.
    consuming func finish() -> Result
    mutating func beginObject()
    mutating func endObject()
    mutating func beginArray()
    mutating func endArray()
    /// An object key, the name of field `slot` (``MessageLayout/keySlot(_:)``: a slot always
    /// has the same name).
    mutating func key(_ name: StaticString, slot: Int)
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

    consuming func finish() -> [UInt8] { bytes }

    mutating func key(_ name: StaticString, slot _: Int) {
        name.withUTF8Buffer { key(utf8: $0) }
    }

    mutating func string(decimal value: Int64) { string(String(value)) }

    mutating func string(decimal value: UInt64) { string(String(value)) }

    mutating func hexString(_ bytes: UnsafeBufferPointer<UInt8>) { string(BinaryText.hex(bytes)) }

    mutating func base64String(_ bytes: UnsafeBufferPointer<UInt8>) { string(BinaryText.base64(bytes)) }
}

extension ExclusiveDocumentBuilder: TranscodingOutput {
    static func sized(forInput bytes: Int, limit: Int) -> ExclusiveDocumentBuilder {
        // A field takes at least two bytes; hex ids and decimal strings double their bytes.
        ExclusiveDocumentBuilder(
            nodes: min(bytes / 4, limit / 16) + 16, stringBytes: min(bytes * 2, limit) + 64,
            keySlots: MessageKind.layouts.keySlotCount)
    }

    static func scratch() -> ExclusiveDocumentBuilder {
        ExclusiveDocumentBuilder(nodes: 16, stringBytes: 64, keySlots: MessageKind.layouts.keySlotCount)
    }
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
