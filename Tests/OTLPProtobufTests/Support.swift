import Foundation
import OTLPProtobuf
import PulseJSON
import PulseKit
import PulseTestSupport
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

    /// The cases of a JSON manifest in the fixtures (`invalid.json`, `responses.json`); none when
    /// it is missing or unreadable, which the tests counting the cases report.
    static func manifest<Case: Decodable>(_ file: String) -> [Case] {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil),
            let data = try? Data(contentsOf: url.appendingPathComponent(file))
        else { return [] }
        return (try? JSONDecoder().decode([Case].self, from: data)) ?? []
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

/// The output bound as both outputs of the transcoder apply it: `measure` decodes one logs
/// request of 100 records with the given limits and gives the output's size. With the limit at its
/// full size it passes; at half of it, it fails with `outputTooLarge`. Returns the full size and
/// that error (nil, with an issue recorded, when it passed).
func checkOutputBound(
    _ measure: ([UInt8], OTLPProtobufLimits) throws -> Int
) throws -> (full: Int, error: OTLPProtobufError?) {
    let records = (0..<100).map { index in Wire { $0.field(3, "record number \(index)") }.bytes }
    let request = logsRequest(records)
    let full = try measure(request, OTLPProtobufLimits())
    #expect(throws: Never.self) { _ = try measure(request, OTLPProtobufLimits(maxOutputBytes: full)) }
    do {
        _ = try measure(request, OTLPProtobufLimits(maxOutputBytes: full / 2))
        Issue.record("an output twice the limit was produced")
        return (full, nil)
    } catch {
        let error = error as? OTLPProtobufError
        #expect(error?.code == .outputTooLarge)
        return (full, error)
    }
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
