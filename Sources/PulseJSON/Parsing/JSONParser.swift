import CPulseSimdJSON
public import PulseKit

/// A reusable JSON parser backed by simdjson.
///
/// Each parse validates the whole input (syntax, UTF-8, nesting depth, size) and produces a
/// ``JSONDocument``. The parser keeps its buffers between parses, so reuse one parser per thread
/// or task instead of creating one per document. Those buffers take up to about 30 bytes per input
/// byte; after a document larger than ``retainedBytesLimit`` the parser releases them again (and
/// the document adopts its node tape and strings from them instead of copying them).
/// It is not `Sendable`: never share one across concurrent tasks.
///
/// RFC 8259 is followed strictly: any value may be at the top level; no comments, trailing commas,
/// `NaN` or leading zeros; `\u` escapes must form valid UTF-16 (a lone surrogate is an error).
/// Integers outside the `Int64`/`UInt64` range and numbers overflowing `Double` are rejected with
/// ``PulseJSONError/Code/invalidNumber`` rather than rounded, unless the parser was created with
/// `bigIntegersAsDoubles` (then such integers are read as the nearest `Double` outside the 64-bit
/// range, as most JSON parsers read them as doubles; a number overflowing `Double` is still
/// rejected).
public final class JSONParser {
    /// The largest accepted ``maxDepth``; larger requests are clamped to it.
    public static let depthLimit = Int(PGJSON_MAX_DEPTH_LIMIT)
    /// The largest accepted ``maxBytes`` (1 GiB); larger requests are clamped to it.
    public static let byteLimit = Int(PGJSON_MAX_BYTES_LIMIT)
    /// Inputs up to this size (4 MiB) leave their buffers in the parser for the next parse.
    public static let retainedBytesLimit = 4 << 20

    /// The deepest nesting of arrays and objects accepted (`[[1]]` has depth 2; a scalar 0).
    public let maxDepth: Int
    /// The longest input accepted, in bytes.
    public let maxBytes: Int
    /// Whether integer literals beyond the `Int64`/`UInt64` range are read as doubles.
    public let bigIntegersAsDoubles: Bool

    private let handle: OpaquePointer

    /// Creates a parser.
    ///
    /// - Parameters:
    ///   - maxDepth: deepest nesting of arrays/objects accepted, clamped to 1...``depthLimit``.
    ///   - maxBytes: longest input accepted, clamped to 0...``byteLimit``.
    ///   - bigIntegersAsDoubles: read integer literals beyond the `Int64`/`UInt64` range as the
    ///     nearest `Double` instead of failing (for input whose numbers a schema checks later, so
    ///     a valid document with such a number in a member nobody reads is not refused).
    public init(maxDepth: Int = 64, maxBytes: Int = 64 << 20, bigIntegersAsDoubles: Bool = false) {
        let depth = min(max(maxDepth, 1), Self.depthLimit)
        let bytes = min(max(maxBytes, 0), Self.byteLimit)
        guard let handle = pgjson_parser_create(depth, bytes) else {
            fatalError("PulseJSON: out of memory while creating a parser")
        }
        self.handle = handle
        self.maxDepth = depth
        self.maxBytes = bytes
        self.bigIntegersAsDoubles = bigIntegersAsDoubles
    }

    deinit {
        pgjson_parser_destroy(handle)
    }

    /// Parses a complete JSON text.
    public func parse(_ bytes: [UInt8]) throws(PulseJSONError) -> JSONDocument {
        try bytes.withUnsafeBytes { parsed($0) }.get()
    }

    /// Parses a complete JSON text from memory the caller owns (not retained after the call).
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(PulseJSONError) -> JSONDocument {
        try parsed(bytes).get()
    }

    private func parsed(_ bytes: UnsafeRawBufferPointer) -> Result<JSONDocument, PulseJSONError> {
        let result = run(bytes)
        // The rare second pass: only a number error, and only when an integer was too large.
        if bigIntegersAsDoubles, case .failure(let error) = result, error.code == .invalidNumber,
            let widened = Self.widenedBigIntegers(bytes)
        {
            return widened.withUnsafeBytes { run($0) }
        }
        return result
    }

    /// The text with `.0` after every integer literal outside the `Int64`/`UInt64` range (so
    /// simdjson reads it as the nearest double), or `nil` when there is none. Strings are skipped.
    /// A literal just below `Int64.min` that would round onto it becomes the next double down
    /// instead: a big integer never reads as an in-range integral double.
    static func widenedBigIntegers(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        var output: [UInt8] = []
        var copied = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                while index < count, bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                index += 1
                continue
            }
            let start = index
            var integral = true
            while index < count, Self.isNumberByte(bytes[index]) {
                if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]), index > start {
                    integral = false
                }
                index += 1
            }
            let digits = index - start - (byte == UInt8(ascii: "-") ? 1 : 0)
            guard integral, digits > 18 else { continue }
            let token = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard Int64(token) == nil, UInt64(token) == nil else { continue }
            if output.isEmpty { output.reserveCapacity(count + 16) }
            if Double(token) == -0x1p63 {
                // Rounds onto Int64.min: take the next double down, so it stays outside the range.
                output.append(contentsOf: bytes[copied..<start])
                output.append(contentsOf: Array("-9223372036854777856.0".utf8))
            } else {
                output.append(contentsOf: bytes[copied..<index])
                output.append(contentsOf: Array(".0".utf8))
            }
            copied = index
        }
        guard copied > 0 else { return nil }
        output.append(contentsOf: bytes[copied..<count])
        return output
    }

    private static func isNumberByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    private func run(_ bytes: UnsafeRawBufferPointer) -> Result<JSONDocument, PulseJSONError> {
        var result = pgjson_result()
        let data = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let code = pgjson_parse(handle, data, bytes.count, &result)
        guard Int(code) == PGJSON_OK, let nodeBase = result.nodes else {
            let error = Self.error(code: code, result: result)
            if bytes.count > Self.retainedBytesLimit { pgjson_parser_trim(handle) }
            return .failure(error)
        }
        if bytes.count > Self.retainedBytesLimit {
            // A large document keeps the parser's buffers (the parser starts afresh) instead of
            // being copied out of them, so it never exists twice.
            var nodes: UnsafeMutablePointer<pgjson_node>?
            var strings: UnsafeMutablePointer<UInt8>?
            if pgjson_parser_take(handle, &nodes, &strings) == 0, let nodes, let strings {
                return .success(
                    JSONDocument(
                        storage: JSONStorage(
                            adoptingNodes: nodes, nodeCount: result.node_count, strings: strings,
                            stringCount: result.string_bytes)))
            }
        }
        let storage = JSONStorage(
            nodes: UnsafeRawPointer(nodeBase), nodeCount: result.node_count, strings: result.strings,
            stringCount: result.string_bytes)
        if bytes.count > Self.retainedBytesLimit { pgjson_parser_trim(handle) }
        return .success(JSONDocument(storage: storage))
    }

    private static func error(code: Int32, result: pgjson_result) -> PulseJSONError {
        let message = result.message.map { String(cString: $0) } ?? "unknown error"
        let mapped: PulseJSONError.Code
        switch Int(code) {
        case PGJSON_ERR_INVALID_JSON: mapped = .invalidJSON
        case PGJSON_ERR_INVALID_UTF8: mapped = .invalidUTF8
        case PGJSON_ERR_DEPTH: mapped = .depthExceeded
        case PGJSON_ERR_TOO_LARGE: mapped = .tooLarge
        case PGJSON_ERR_NUMBER: mapped = .invalidNumber
        case PGJSON_ERR_NO_MEMORY: mapped = .outOfMemory
        default: mapped = .internalError
        }
        return PulseJSONError(mapped, message)
    }
}

@available(*, unavailable, message: "A JSONParser reuses internal buffers; create one per task or thread.")
extension JSONParser: Sendable {}
