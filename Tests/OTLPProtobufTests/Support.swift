import Foundation
import OTLPProtobuf
import PulseJSON
import Testing

/// The checked-in fixtures written by `scripts/generate-otlp-protobuf-fixtures.py`.
enum Fixtures {
    static var directory: URL {
        get throws {
            try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
        }
    }

    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    /// The valid request fixtures: every `<signal>-<name>.pb` with its `.json`.
    static func requestNames() -> [String] {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil),
            let names = try? FileManager.default.contentsOfDirectory(atPath: url.path)
        else { return [] }
        return names.filter { $0.hasSuffix(".pb") && !$0.hasPrefix("invalid-") }
            .map { String($0.dropLast(3)) }
            .sorted()
    }

    static func signal(of name: String) -> OTLPProtobufSignal? {
        OTLPProtobufSignal.allCases.first { name.hasPrefix($0.rawValue + "-") }
    }
}

/// Values compared up to object member order (as JSON objects are unordered).
func normalized(_ value: JSONValue) -> JSONValue {
    switch value {
    case .array(let elements):
        return .array(elements.map(normalized))
    case .object(let members):
        return .object(
            members.map { JSONMember(key: $0.key, value: normalized($0.value)) }.sorted { $0.key < $1.key })
    default:
        return value
    }
}

func parseJSON(_ bytes: [UInt8]) throws -> JSONValue {
    try JSONValue.parse(bytes, maxDepth: 64)
}

/// Transcodes and returns the error, failing the test when transcoding succeeds.
func transcodingError(
    _ bytes: [UInt8], _ signal: OTLPProtobufSignal, limits: OTLPProtobufLimits = OTLPProtobufLimits()
) -> OTLPProtobufError? {
    do {
        _ = try OTLPProtobuf.transcodeToJSON(bytes, signal: signal, limits: limits)
        Issue.record("transcoding succeeded, an error was expected")
        return nil
    } catch {
        return error
    }
}

/// Builds protobuf wire bytes for tests.
struct Wire {
    var bytes: [UInt8] = []

    init() {}

    init(_ build: (inout Wire) -> Void) {
        build(&self)
    }

    mutating func raw(_ more: [UInt8]) { bytes += more }

    mutating func varint(_ value: UInt64) {
        var rest = value
        while rest >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        bytes.append(UInt8(rest))
    }

    mutating func tag(_ number: UInt32, _ wireType: UInt8) {
        varint(UInt64(number) << 3 | UInt64(wireType))
    }

    mutating func varintField(_ number: UInt32, _ value: UInt64) {
        tag(number, 0)
        varint(value)
    }

    mutating func fixed64Field(_ number: UInt32, _ value: UInt64) {
        tag(number, 1)
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func doubleField(_ number: UInt32, _ value: Double) {
        fixed64Field(number, value.bitPattern)
    }

    mutating func fixed32Field(_ number: UInt32, _ value: UInt32) {
        tag(number, 5)
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func field(_ number: UInt32, _ payload: [UInt8]) {
        tag(number, 2)
        varint(UInt64(payload.count))
        bytes += payload
    }

    mutating func field(_ number: UInt32, _ text: String) {
        field(number, Array(text.utf8))
    }

    mutating func field(_ number: UInt32, _ build: (inout Wire) -> Void) {
        field(number, Wire(build).bytes)
    }
}

/// A logs request with one resource, one scope and the given log records (each a LogRecord body).
func logsRequest(_ records: [[UInt8]]) -> [UInt8] {
    Wire { request in
        request.field(1) { resourceLogs in
            resourceLogs.field(2) { scopeLogs in
                for record in records { scopeLogs.field(2, record) }
            }
        }
    }.bytes
}

/// The first log record of a transcoded logs request.
func firstLogRecord(_ json: [UInt8]) throws -> JSONValue {
    let root = try parseJSON(json)
    guard case .array(let resources)? = root["resourceLogs"], case .array(let scopes)? = resources.first?["scopeLogs"],
        case .array(let records)? = scopes.first?["logRecords"], let record = records.first
    else {
        Issue.record("no log record in \(String(decoding: json, as: UTF8.self))")
        return .null
    }
    return record
}
