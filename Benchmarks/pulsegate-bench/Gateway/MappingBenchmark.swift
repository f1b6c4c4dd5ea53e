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
    /// `valgrind --tool=callgrind` compare builds on a loaded machine).
    static func loop(iterations: Int) -> Bool {
        let document = try! JSONParser().parse(SampleDocuments.otlpLogs())
        var events = 0
        for _ in 0..<iterations { events &+= MappingBenchmarkHooks.mapLogs(document.root) }
        return events > 0
    }

    static func format(_ value: Double) -> String {
        let scaled = (value * 100).rounded() / 100
        return String(describing: scaled)
    }
}
