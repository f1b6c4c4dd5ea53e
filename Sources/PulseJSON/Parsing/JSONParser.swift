import CPulseSimdJSON

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
/// ``PulseJSONError/Code/invalidNumber`` rather than rounded.
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

    private let handle: OpaquePointer

    /// Creates a parser.
    ///
    /// - Parameters:
    ///   - maxDepth: deepest nesting of arrays/objects accepted, clamped to 1...``depthLimit``.
    ///   - maxBytes: longest input accepted, clamped to 0...``byteLimit``.
    public init(maxDepth: Int = 64, maxBytes: Int = 64 << 20) {
        let depth = min(max(maxDepth, 1), Self.depthLimit)
        let bytes = min(max(maxBytes, 0), Self.byteLimit)
        guard let handle = pgjson_parser_create(depth, bytes) else {
            fatalError("PulseJSON: out of memory while creating a parser")
        }
        self.handle = handle
        self.maxDepth = depth
        self.maxBytes = bytes
    }

    deinit {
        pgjson_parser_destroy(handle)
    }

    /// Parses a complete JSON text.
    public func parse(_ bytes: [UInt8]) throws(PulseJSONError) -> JSONDocument {
        let result = bytes.withUnsafeBytes { run($0) }
        return try result.get()
    }

    /// Parses a complete JSON text from memory the caller owns (not retained after the call).
    public func parse(_ bytes: UnsafeRawBufferPointer) throws(PulseJSONError) -> JSONDocument {
        try run(bytes).get()
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
