import PulseGateway
import PulseJSON

/// `pulsegate-bench mapping`: the gateway's OTLP/JSON → Pulse mapping of the sample logs request
/// (20 records), without and with the strict type checks of `OTLPValidator`, on one parsed
/// document (parsing is `pulsegate-bench json`'s subject).
enum MappingBenchmark {
    static func run() -> Bool {
        let otlp = SampleDocuments.otlpLogs()
        let document = try! JSONParser().parse(otlp)
        let root = document.root
        let before = MappingBenchmarkHooks.mapLogs(root, validating: false)
        let after = MappingBenchmarkHooks.mapLogs(root, validating: true)
        guard before > 0, before == after, MappingBenchmarkHooks.validateLogs(root) == 1 else {
            print("mapping benchmark: the sample request did not map (\(before), \(after))")
            return false
        }
        print("Mapping benchmark: thread CPU time per request (best round), OTLP logs, \(otlp.count) bytes, 20 records")
        let comparison = Stopwatch.compare(
            baseline: { MappingBenchmarkHooks.mapLogs(root, validating: false) },
            candidate: { MappingBenchmarkHooks.mapLogs(root, validating: true) })
        let validation = Stopwatch.microsPerCall { MappingBenchmarkHooks.validateLogs(root) }
        print("  map, no type checks (before):  \(format(comparison.baseline)) µs")
        print("  type checks + map (after):     \(format(comparison.candidate)) µs")
        print("  type checks alone:             \(format(validation)) µs")
        print("  after / before (median ratio): \(format(1 / comparison.speedup))")
        return true
    }

    /// Validates and maps the sample request `iterations` times, untimed (instruction counts under
    /// `valgrind --tool=callgrind` compare builds on a loaded machine).
    static func loop(iterations: Int) -> Bool {
        let document = try! JSONParser().parse(SampleDocuments.otlpLogs())
        var events = 0
        for _ in 0..<iterations { events &+= MappingBenchmarkHooks.mapLogs(document.root, validating: true) }
        return events > 0
    }

    static func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return String(describing: scaled)
    }
}
