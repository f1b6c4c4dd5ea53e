// libFuzzer entry point for the OTLP protobuf transcoder. Build and run with
// `scripts/fuzz.sh fuzz-protobuf <seconds>`.
//
// Each input is transcoded as a logs, a traces and a metrics export request. A success must be
// compact JSON that PulseJSON parses within the gateway's depth (64) and that re-encodes to the same
// bytes; a failure must be a well-formed OTLPProtobufError. A shallower depth limit must give the
// same output or error, or fail with nestingTooDeep. The document decoder (the gateway's path) must
// give the document PulseJSON parses from the transcoded text, or fail with the same error; each
// decoded document then goes through the gateway's mapping walk, which must agree with the type
// checks in document order (PulseGateway's MappingFuzzHooks). The input is also sent as a string
// field, which
// must be accepted exactly when the standard library finds it valid UTF-8. Any broken invariant
// traps, which libFuzzer reports as a crash.

import OTLPProtobuf
import PulseGateway
import PulseJSON
import PulseKit

/// Small output bound keeps executions fast and makes the size check reachable.
private let limits = OTLPProtobufLimits(maxDepth: 32, maxOutputBytes: 1 << 20)
private let shallow = OTLPProtobufLimits(maxDepth: 6, maxOutputBytes: 1 << 20)

/// libFuzzer runs inputs one at a time on one thread.
nonisolated(unsafe) private let parser = JSONParser(maxDepth: 64, maxBytes: 4 << 20)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    for signal in OTLPProtobufSignal.allCases {
        let full = transcode(input, signal, limits)
        let limited = transcode(input, signal, shallow)
        // The shallow run stops at the first message deeper than 6 levels; up to there both runs
        // do the same work, so they agree on everything else.
        switch (full, limited) {
        case (.success(let json), .success(let shallowJSON)):
            check(json == shallowJSON, "the depth limit changed a successful output")
        case (.success, .failure(let error)):
            check(error.code == .nestingTooDeep, "only the shallow run failed, with \(error.code)")
        case (.failure(let error), .success):
            check(false, "only the deep run failed, with \(error.code)")
        case (.failure(let error), .failure(let shallowError)):
            if shallowError.code != .nestingTooDeep {
                check(error.code == shallowError.code && error.path == shallowError.path, "the runs failed differently")
            }
        }
        switch full {
        case .success(let json):
            checkOutput(json)
        case .failure(let error):
            checkError(error, inputSize: size)
        }
        checkDocument(input, signal, agreesWith: full)
    }
    checkStringValidation(input)
    return 0
}

/// The input as the `severityText` of a log record: accepted exactly when the standard library
/// considers it UTF-8, and then written back unchanged.
private func checkStringValidation(_ input: [UInt8]) {
    guard input.count < 1 << 12 else { return }
    var record: [UInt8] = [0x1A]  // field 3, length-delimited
    appendVarint(UInt64(input.count), to: &record)
    record += input
    var scopeLogs: [UInt8] = [0x12]
    appendVarint(UInt64(record.count), to: &scopeLogs)
    scopeLogs += record
    var resourceLogs: [UInt8] = [0x12]
    appendVarint(UInt64(scopeLogs.count), to: &resourceLogs)
    resourceLogs += scopeLogs
    var request: [UInt8] = [0x0A]
    appendVarint(UInt64(resourceLogs.count), to: &request)
    request += resourceLogs
    let expected = String(validating: input, as: UTF8.self)
    switch transcode(request, .logs, limits) {
    case .success(let json):
        check(expected != nil, "invalid UTF-8 was accepted")
        guard let expected, !expected.isEmpty else { return }
        let text = try? parser.parse(json).root["resourceLogs"]?[0]?["scopeLogs"]?[0]?["logRecords"]?[0]?[
            "severityText"]?.string
        check(text == expected, "the string changed on the way through")
    case .failure(let error):
        check(expected == nil && error.code == .invalidUTF8, "valid UTF-8 was rejected: \(error.code)")
    }
}

private func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    var rest = value
    while rest >= 0x80 {
        bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
        rest >>= 7
    }
    bytes.append(UInt8(rest))
}

private func transcode(
    _ input: [UInt8], _ signal: OTLPProtobufSignal, _ limits: OTLPProtobufLimits
) -> Result<[UInt8], OTLPProtobufError> {
    Result { () throws(OTLPProtobufError) in try OTLPProtobuf.transcodeToJSON(input, signal: signal, limits: limits) }
}

/// The decoded document is the parsed transcoding: the same nodes, re-encoding to the same text; a
/// failure is the transcoder's (the document's size limit counts other bytes, so `outputTooLarge`
/// may differ: the document's bytes are checked against the limit instead).
private func checkDocument(
    _ input: [UInt8], _ signal: OTLPProtobufSignal, agreesWith text: Result<[UInt8], OTLPProtobufError>
) {
    let decoded = Result { () throws(OTLPProtobufError) in
        try OTLPProtobuf.decodeDocument(input, signal: signal, limits: limits)
    }
    switch (text, decoded) {
    case (.success(let json), .success(let document)):
        check(document.byteCount <= limits.maxOutputBytes, "document over maxOutputBytes")
        check(document.root.value.encoded() == json, "the document differs from the transcoded text")
        check((try? parser.parse(json))?.nodeCount == document.nodeCount, "the document has other nodes")
        if let problem = MappingFuzzHooks.disagreement(document.root) { check(false, problem) }
    case (.failure(let textError), .failure(let documentError)):
        if textError.code != .outputTooLarge && documentError.code != .outputTooLarge {
            check(
                textError.code == documentError.code && textError.message == documentError.message,
                "the document failed differently: \(documentError.code) vs \(textError.code)")
        }
    case (.success, .failure(let error)):
        check(error.code == .outputTooLarge, "only the document failed, with \(error.code)")
    case (.failure(let error), .success):
        check(error.code == .outputTooLarge, "only the transcoding failed, with \(error.code)")
    }
}

private func checkOutput(_ json: [UInt8]) {
    check(json.count <= limits.maxOutputBytes, "output over maxOutputBytes")
    let document: JSONDocument
    do {
        document = try parser.parse(json)
    } catch {
        fatalError("fuzz-protobuf invariant violated: output is not JSON: \(error)")
    }
    check(document.root.kind == .object, "output is not an object")
    check(document.root.value.encoded() == json, "output is not in the writer's compact form")
}

private func checkError(_ error: OTLPProtobufError, inputSize: Int) {
    check(!error.message.isEmpty, "empty error message")
    if let offset = error.offset {
        check(offset >= 0 && offset <= inputSize, "error offset outside the input")
    }
    let subject = error.path.isEmpty ? "Export" : error.path + ": "
    check(error.message.hasPrefix(subject), "error message does not start with its path")
}

/// Traps with `message` when an invariant does not hold (kept in release builds).
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("fuzz-protobuf invariant violated: \(message())")
    }
}
