import Foundation
import PulseGateway
import PulseJSON

/// `pulsegate-bench stages [protobuf-file]`: the gateway's intake work per request, stage by stage,
/// on the intake benchmark's request (`docs/examples/otlp-logs.json`, 20 log records, and its
/// protobuf form, `docs/examples/otlp-logs.pb`, written by `scripts/bench/otlp-json-to-protobuf.py`;
/// run from the package directory). The walk is the mapping's one pass over the parsed document:
/// type checks, mapping, redaction, ids and the diagnostics observation. Thread CPU
/// time per request, best round. The durable commit is `pulsegate-bench sqlite-ceiling`'s subject
/// (it runs on the database thread and waits for the disk); HTTP and thread hops are only in
/// `scripts/bench-gateway.sh`.
enum StageBenchmark {
    /// A JSON parser configured as the intake configures its parsers.
    static func makeParser() -> JSONParser {
        JSONParser(maxDepth: 64, maxBytes: 64 << 20, bigIntegersAsDoubles: true)
    }

    static func run(protobufPath: String?) -> Bool {
        let jsonFile = "docs/examples/otlp-logs.json"
        let protobufFile = protobufPath ?? "docs/examples/otlp-logs.pb"
        guard let jsonData = FileManager.default.contents(atPath: jsonFile),
            let data = FileManager.default.contents(atPath: protobufFile)
        else {
            print("stages: no \(jsonFile) or \(protobufFile) (run from the package directory)")
            return false
        }
        let json = [UInt8](jsonData)
        let protobuf = [UInt8](data)
        let parser = Self.makeParser()
        guard let parsed = try? parser.parse(json), let decoded = MappingBenchmarkHooks.decodeProtobufLogs(protobuf),
            let transcoded = MappingBenchmarkHooks.transcodeAndParseProtobufLogs(protobuf, parser: parser)
        else {
            print("stages: the sample bodies do not parse")
            return false
        }
        // Both media types must carry the same request (member order aside, so compared by what they
        // map to), and the two protobuf paths the same document.
        let drafts = MappingBenchmarkHooks.mapLogs(parsed.root)
        guard transcoded.root.value == decoded.root.value, drafts > 0,
            MappingBenchmarkHooks.mapLogs(decoded.root) == drafts,
            MappingBenchmarkHooks.observesDiagnostics(parsed.root) == 1,
            MappingBenchmarkHooks.observesDiagnostics(decoded.root) == 1,
            MappingBenchmarkHooks.encodeForStorage(body: [], root: decoded.root)
                == MappingBenchmarkHooks.encodeForStorage(body: [], root: parsed.root)
        else {
            print("stages: the protobuf body is not the JSON body's request (regenerate \(protobufFile))")
            return false
        }
        let root = parsed.root
        print(
            "Intake stages: thread CPU µs per request (best round), OTLP logs, 20 records, JSON \(json.count) B,"
                + " protobuf \(protobuf.count) B")
        let rows: [(String, () -> Int)] = [
            ("parse JSON (simdjson + node tape)", { (try? parser.parse(json))?.nodeCount ?? -1 }),
            (
                "protobuf → document (single pass)",
                { MappingBenchmarkHooks.decodeProtobufLogs(protobuf)?.nodeCount ?? -1 }
            ),
            (
                "protobuf → JSON text → parse (before)",
                { MappingBenchmarkHooks.transcodeAndParseProtobufLogs(protobuf, parser: parser)?.nodeCount ?? -1 }
            ),
            ("the walk: checks, map, diagnostics", { MappingBenchmarkHooks.mapLogs(root) }),
            ("the walk, protobuf document", { MappingBenchmarkHooks.mapLogs(decoded.root) }),
            (
                "map + SHA-256 + outbox encoding",
                { MappingBenchmarkHooks.encodeForStorage(body: json, root: root) }
            ),
        ]
        var times: [String: Double] = [:]
        for (name, body) in rows {
            let micros = Stopwatch.microsPerCall(body)
            times[name] = micros
            print("  \(name.padding(toLength: 40, withPad: " ", startingAt: 0)) \(MappingBenchmark.format(micros))")
        }
        let encode = times["map + SHA-256 + outbox encoding"]! - times["the walk: checks, map, diagnostics"]!
        print(
            "  \("encode (SHA-256 + zstd), by difference".padding(toLength: 40, withPad: " ", startingAt: 0)) "
                + MappingBenchmark.format(encode))
        print("  commit: pulsegate-bench sqlite-ceiling (database thread, fsync)")
        return true
    }

    /// Decodes the protobuf sample `iterations` times, untimed, for profilers (perf, callgrind).
    static func decodeLoop(iterations: Int) -> Bool {
        guard let data = FileManager.default.contents(atPath: "docs/examples/otlp-logs.pb") else { return false }
        let protobuf = [UInt8](data)
        var nodes = 0
        for _ in 0..<iterations { nodes &+= MappingBenchmarkHooks.decodeProtobufLogs(protobuf)?.nodeCount ?? 0 }
        return nodes > 0
    }
}
