package import PulseJSON
import PulseKit

/// OTLP/HTTP protobuf support: decoding export requests into their OTLP/JSON form and encoding
/// responses.
///
/// The gateway walks one representation of OTLP, the JSON document model. A protobuf request
/// (`Content-Type: application/x-protobuf`) is decoded with ``decodeDocument(_:signal:limits:)``
/// straight into the ``JSONDocument`` that parsing its canonical OTLP/JSON would give (no JSON text
/// in between), which then goes through exactly the same limits, deduplication and mapping as a
/// JSON request; ``transcodeToJSON(_:signal:limits:)`` writes the same form as JSON text (tests,
/// fuzzers, tools). The answer to a protobuf request is protobuf too:
/// ``encodeResponse(signal:rejected:errorMessage:)`` for 200 responses and
/// ``encodeStatus(code:message:)`` for error bodies.
///
/// The wire decoder is written from the public opentelemetry-proto v1 field numbers (common,
/// resource, logs, trace and metrics, including exemplars and the development fields
/// `Resource.entity_refs`, `KeyValue.key_strindex` and `AnyValue.string_value_strindex`).
package enum OTLPProtobuf {
    /// The protobuf media type of OTLP/HTTP.
    package static let mediaType = "application/x-protobuf"

    /// Transcodes a protobuf export request of `signal` into OTLP/JSON.
    ///
    /// The output follows the OTLP/JSON encoding: lowerCamelCase keys; `traceId`, `spanId` and
    /// `parentSpanId` as lowercase hex; enums as integers; 64-bit integers (`int64`, `uint64`,
    /// `fixed64`, `sfixed64`) as decimal strings; 32-bit integers as numbers; doubles as numbers or
    /// `"NaN"`, `"Infinity"`, `"-Infinity"`; `bytesValue` as base64; fields holding their default
    /// value and empty repeated fields omitted, as protobuf's JSON mapping does (fields with presence,
    /// such as oneof members, `HistogramDataPoint.sum` or an empty `resource`, are written when
    /// present). Keys are written in field-number order.
    ///
    /// Unknown fields of every wire type are skipped, as are known fields carrying an unexpected wire
    /// type. Repeated numeric fields are accepted packed and unpacked. Groups, malformed wire data,
    /// invalid UTF-8 in strings and nesting beyond `limits.maxDepth` are rejected.
    ///
    /// - Parameters:
    ///   - bytes: the request body, already decompressed.
    ///   - signal: which export request `bytes` holds.
    ///   - limits: nesting and output-size bounds.
    /// - Returns: compact UTF-8 JSON (`{}` for an empty request).
    /// - Throws: ``OTLPProtobufError`` whose message names the field path of the problem.
    package static func transcodeToJSON(
        _ bytes: [UInt8], signal: OTLPProtobufSignal, limits: OTLPProtobufLimits = OTLPProtobufLimits()
    ) throws(OTLPProtobufError) -> [UInt8] {
        try transcode(bytes, signal: signal, limits: limits, into: JSONWriter.self)
    }

    /// Decodes a protobuf export request of `signal` straight into the document model of its
    /// OTLP/JSON form, without JSON text in between.
    ///
    /// The document is the one ``JSONParser`` gives for the output of
    /// ``transcodeToJSON(_:signal:limits:)`` (same members, order, kinds and values), so a protobuf
    /// request takes the same walk as a JSON one. The rules and errors are the same too, except that
    /// `limits.maxOutputBytes` bounds the document's ``JSONDocumentBuilder/byteCount`` (16 bytes per
    /// value and key plus the string bytes) rather than the JSON text.
    ///
    /// - Throws: ``OTLPProtobufError`` whose message names the field path of the problem.
    package static func decodeDocument(
        _ bytes: [UInt8], signal: OTLPProtobufSignal, limits: OTLPProtobufLimits = OTLPProtobufLimits()
    ) throws(OTLPProtobufError) -> JSONDocument {
        try transcode(bytes, signal: signal, limits: limits, into: ExclusiveDocumentBuilder.self)
    }

    private static func transcode<Output: TranscodingOutput & ~Copyable>(
        _ bytes: [UInt8], signal: OTLPProtobufSignal, limits: OTLPProtobufLimits, into _: Output.Type
    ) throws(OTLPProtobufError) -> Output.Result {
        guard bytes.count < Int(UInt32.max) else {
            throw OTLPProtobufError(.inputTooLarge, "input of \(bytes.count) bytes is larger than 4 GiB - 1")
        }
        let root = MessageKind.request(signal)
        return try bytes.withUnsafeBufferPointer { (input) throws(OTLPProtobufError) -> Output.Result in
            var transcoder = Transcoder<Output>(input: input, root: root, limits: limits)
            try transcoder.transcode(root)
            return transcoder.output().finish()
        }
    }

    /// Encodes the `Export…ServiceResponse` of `signal`.
    ///
    /// Full success (`rejected == 0` and an empty `errorMessage`) is the empty message (zero bytes).
    /// Otherwise the response carries `partial_success` (field 1) with `rejected_log_records`,
    /// `rejected_spans` or `rejected_data_points` (field 1, `int64`, omitted when 0) and
    /// `error_message` (field 2, omitted when empty); a message with nothing rejected is a warning.
    package static func encodeResponse(signal: OTLPProtobufSignal, rejected: Int64, errorMessage: String) -> [UInt8] {
        // The three signals' responses share one layout; only the field names differ.
        _ = signal
        guard rejected != 0 || !errorMessage.isEmpty else { return [] }
        var partialSuccess = WireWriter()
        partialSuccess.int64Field(1, rejected)
        partialSuccess.stringField(2, errorMessage)
        var response = WireWriter()
        response.bytesField(1, partialSuccess.bytes)
        return response.bytes
    }

    /// Encodes a `google.rpc.Status` (`code` field 1 `int32`, `message` field 2 `string`, both
    /// omitted at their defaults): the body of an OTLP/HTTP error response to a protobuf request.
    ///
    /// - Parameters:
    ///   - code: a `google.rpc.Code` value (3 `INVALID_ARGUMENT` for a 400, 8 `RESOURCE_EXHAUSTED`
    ///     for a 429, 14 `UNAVAILABLE` for a 503, …).
    ///   - message: a developer-facing explanation.
    package static func encodeStatus(code: Int32, message: String) -> [UInt8] {
        var status = WireWriter()
        status.int64Field(1, Int64(code))
        status.stringField(2, message)
        return status.bytes
    }
}
