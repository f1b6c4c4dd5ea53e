import PulseJSON
import PulseKit

/// Parses `text` (as UTF-8) with a fresh parser.
func parse(_ text: String, maxDepth: Int = 64, maxBytes: Int = 64 << 20) throws(PulseJSONError) -> JSONDocument {
    try JSONParser(maxDepth: maxDepth, maxBytes: maxBytes).parse(Array(text.utf8))
}

/// The error code parsing `bytes` fails with, or nil if it succeeds.
func failure(_ bytes: [UInt8], maxDepth: Int = 64, maxBytes: Int = 64 << 20) -> PulseJSONError.Code? {
    do {
        _ = try JSONParser(maxDepth: maxDepth, maxBytes: maxBytes).parse(bytes)
        return nil
    } catch {
        return error.code
    }
}

/// The error code parsing `text` fails with, or nil if it succeeds.
func failure(_ text: String, maxDepth: Int = 64, maxBytes: Int = 64 << 20) -> PulseJSONError.Code? {
    failure(Array(text.utf8), maxDepth: maxDepth, maxBytes: maxBytes)
}

/// Encodes with a writer configured by `body`, returning the output as a String.
func written(escapesLineSeparators: Bool = false, _ body: (inout JSONWriter) -> Void) -> String {
    var writer = JSONWriter(escapesLineSeparators: escapesLineSeparators)
    body(&writer)
    return String(decoding: writer.bytes, as: UTF8.self)
}

/// Bit-exact equality that also distinguishes -0.0 from 0.0 inside value trees.
func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.array(let xs), .array(let ys)):
        return xs.count == ys.count && zip(xs, ys).allSatisfy { identical($0, $1) }
    case (.object(let xs), .object(let ys)):
        return xs.count == ys.count && zip(xs, ys).allSatisfy { $0.key == $1.key && identical($0.value, $1.value) }
    default: return a == b
    }
}

/// A value exercising every kind, escapes, non-ASCII text and numeric extremes.
let everyKindValue: JSONValue = .object([
    JSONMember(key: "null", value: .null),
    JSONMember(key: "bools", value: .array([.bool(true), .bool(false)])),
    JSONMember(
        key: "ints",
        value: .array([.int(0), .int(-1), .int(42), .int(.min), .int(.max)])),
    JSONMember(key: "uints", value: .array([.uint(UInt64(Int64.max) + 1), .uint(.max)])),
    JSONMember(
        key: "doubles",
        value: .array([
            .double(0.0), .double(-0.0), .double(1.5), .double(0.1), .double(1e-5), .double(1e16),
            .double(-2.5e-308), .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(100),
            .double(0.30000000000000004),
        ])),
    JSONMember(key: "text", value: .string("quote\" backslash\\ slash/ tab\t nl\n nul\u{0} bell\u{7} del\u{7F}")),
    JSONMember(key: "unicode", value: .string("é € 😀 \u{2028}\u{2029} 日本語")),
    JSONMember(key: "", value: .string("")),
    JSONMember(key: "key with \"quotes\"\n", value: .object([])),
    JSONMember(key: "nested", value: .array([.array([]), .object([JSONMember(key: "a", value: .array([.null]))])])),
    JSONMember(key: "dup", value: .int(1)),
    JSONMember(key: "dup", value: .int(2)),
])
