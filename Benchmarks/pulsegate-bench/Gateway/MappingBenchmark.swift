import Foundation
import PulseGateway
import PulseJSON

/// `pulsegate-bench mapping`: the gateway's one walk over the sample OTLP/JSON logs request
/// (20 records): type checks, mapping to Pulse batches and the diagnostics observation, on one
/// parsed document (parsing is `pulsegate-bench json`'s subject).
enum MappingBenchmark {
    static func run() -> Bool {
        let otlp = SampleDocuments.otlpLogs()
        let document = try! JSONParser().parse(otlp)
        let root = document.root
        guard MappingBenchmarkHooks.mapLogs(root) > 0 else {
            print("mapping benchmark: the sample request did not map")
            return false
        }
        print("Mapping benchmark: thread CPU time per request (best round), OTLP logs, \(otlp.count) bytes, 20 records")
        let walk = Stopwatch.microsPerCall { MappingBenchmarkHooks.mapLogs(root) }
        print("  the walk (checks + map + diagnostics): \(format(walk)) µs")
        return true
    }

    /// Walks the sample request `iterations` times, untimed (instruction counts under
    /// `valgrind --tool=callgrind` compare builds on a loaded machine); with `file`, the request in
    /// that file instead: OTLP/JSON, or OTLP protobuf decoded into the document when it ends in
    /// `.pb` (`docs/examples/otlp-logs.json` and `.pb` are `stages`' requests).
    static func loop(iterations: Int, file: String?) -> Bool {
        let document: JSONDocument
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                print("mapping-loop: no \(file)")
                return false
            }
            let body = [UInt8](data)
            let parsed =
                file.hasSuffix(".pb")
                ? MappingBenchmarkHooks.decodeProtobufLogs(body)
                : try? StageBenchmark.makeParser().parse(body)
            guard let parsed else {
                print("mapping-loop: \(file) is not an OTLP logs request")
                return false
            }
            document = parsed
        } else {
            document = try! JSONParser().parse(SampleDocuments.otlpLogs())
        }
        var events = 0
        for _ in 0..<iterations { events &+= MappingBenchmarkHooks.mapLogs(document.root) }
        return iterations == 0 || events > 0
    }

    static func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return String(describing: scaled)
    }
}
