// libFuzzer entry point for PulseJSON (built only with PULSEGATE_FUZZ=1; see scripts/fuzz.sh).
//
// For every input that parses, it checks that the cursor API agrees with itself on every node,
// materializes the document, encodes it with JSONWriter (both escaping modes), parses that again
// and requires the same value, bit for bit, and a byte-identical second encoding. Inputs that do
// not parse must fail the same way twice. The document is also rebuilt node by node with
// JSONDocumentBuilder (what the protobuf decoder feeds the gateway's walk), which must give the same
// nodes and values. Every document then goes through the gateway's mapping walk as a logs, traces
// and metrics request, which must agree with the type checks in document order (PulseGateway's
// MappingFuzzHooks). Any disagreement traps, which libFuzzer reports.

import PulseGateway
import PulseJSON
import PulseKit

/// libFuzzer calls the entry point from a single thread, one input at a time.
nonisolated(unsafe) private let parser = JSONParser(maxDepth: 64, maxBytes: 1 << 20)
/// Re-parses encoded output, which can be larger than the input (`1e2` becomes `100.0`).
nonisolated(unsafe) private let reparser = JSONParser(maxDepth: 64)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let document: JSONDocument
    do {
        document = try parser.parse(input)
    } catch {
        // Rejection must be deterministic (the parser reuses its buffers between inputs).
        do {
            _ = try parser.parse(input)
            fatalError("input rejected once (\(error.code)) and accepted the second time")
        } catch let again {
            check(again.code == error.code, "rejection changed from \(error.code) to \(again.code)")
        }
        return 0
    }
    let value = checkNode(document.root, depth: 0)
    check(identical(document.root.value, value), "JSONNode.value differs from the walked value")
    var builder = JSONDocumentBuilder(nodes: 4, stringBytes: 4)
    builder.copy(document.root)
    let rebuilt = builder.finish()
    check(rebuilt.nodeCount == document.nodeCount, "the rebuilt document has other nodes")
    check(identical(checkNode(rebuilt.root, depth: 0), value), "the rebuilt document has other values")
    if let problem = MappingFuzzHooks.disagreement(document.root) { check(false, problem) }

    for escapesLineSeparators in [false, true] {
        var writer = JSONWriter(capacity: 64, escapesLineSeparators: escapesLineSeparators)
        writer.value(value)
        let encoded = writer.bytes
        check(writer.count == encoded.count, "JSONWriter.count disagrees with its bytes")
        let reparsed: JSONValue
        do {
            reparsed = try reparser.parse(encoded).root.value
        } catch {
            fatalError("JSONWriter output does not parse: \(error)")
        }
        check(identical(reparsed, value), "value changed through JSONWriter and the parser")
        var again = JSONWriter(escapesLineSeparators: escapesLineSeparators)
        again.value(reparsed)
        check(again.bytes == encoded, "second encoding differs from the first")
    }
    check(
        value.encoded()
            == {
                var writer = JSONWriter()
                writer.value(value)
                return writer.bytes
            }(), "JSONValue.encoded() differs from JSONWriter")
    return 0
}

private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("fuzz-json: " + message()) }
}

/// Checks every accessor of `node` (and, recursively, its children) against its kind and
/// returns the value rebuilt from those accessors alone.
private func checkNode(_ node: JSONNode, depth: Int) -> JSONValue {
    check(depth <= 64, "walk deeper than the parser's limit")
    let kind = node.kind
    check(node.isNull == (kind == .null), "isNull disagrees with kind")
    check((node.bool != nil) == (kind == .bool), "bool disagrees with kind")
    check((node.string != nil) == (kind == .string), "string disagrees with kind")
    let isNumber = kind == .int || kind == .uint || kind == .double
    check((node.double != nil) == isNumber, "double disagrees with kind")
    if kind == .int { check(node.int64 != nil, "int without int64") }
    if kind == .uint { check(node.uint64 != nil && node.int64 == nil, "uint accessors") }
    if !isNumber { check(node.int64 == nil && node.uint64 == nil, "integer accessors on a non-number") }
    if kind != .array && kind != .object {
        check(node.count == 0, "count on a scalar")
        check(node[0] == nil && node[""] == nil, "subscripts on a scalar")
    }
    switch kind {
    case .null: return .null
    case .bool: return .bool(node.bool!)
    case .int: return .int(node.int64!)
    case .uint: return .uint(node.uint64!)
    case .double: return .double(node.double!)
    case .string:
        let text = node.string!
        check(node.stringEquals(text), "stringEquals(String) rejects the node's own text")
        check(!node.stringEquals(text + "x"), "stringEquals accepts a longer string")
        check(node.withUTF8 { Array($0) } == Array(text.utf8), "withUTF8 disagrees with string")
        return .string(text)
    case .array:
        var values: [JSONValue] = []
        for (position, element) in node.elements.enumerated() {
            let value = checkNode(element, depth: depth + 1)
            check(node[position].map { identical($0.value, value) } == true, "subscript(index) disagrees")
            values.append(value)
        }
        check(values.count == node.count, "array count disagrees with its elements")
        check(node[values.count] == nil && node[-1] == nil, "out-of-range index answered")
        return .array(values)
    case .object:
        var members: [JSONMember] = []
        var keys = node.members.makeIterator()
        for (keyNode, valueNode) in node.memberNodes {
            guard let key = keyNode.string, let named = keys.next(), named.key == key else {
                fatalError("fuzz-json: members and memberNodes disagree")
            }
            let value = checkNode(valueNode, depth: depth + 1)
            check(identical(named.value.value, value), "members and memberNodes values disagree")
            members.append(JSONMember(key: key, value: value))
        }
        check(keys.next() == nil && members.count == node.count, "object count disagrees with its members")
        for member in members {
            // Lookup returns the first member with that key.
            let first = members.first { $0.key == member.key }!
            check(node[member.key].map { identical($0.value, first.value) } == true, "subscript(key) disagrees")
        }
        return .object(members)
    }
}

/// Structural equality that also tells -0.0 from 0.0 (the parser never produces NaN).
private func identical(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
    case (.array(let xs), .array(let ys)):
        return xs.count == ys.count && zip(xs, ys).allSatisfy { identical($0, $1) }
    case (.object(let xs), .object(let ys)):
        return xs.count == ys.count && zip(xs, ys).allSatisfy { $0.key == $1.key && identical($0.value, $1.value) }
    default: return a == b
    }
}
