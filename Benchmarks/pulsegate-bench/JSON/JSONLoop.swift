import Foundation
import PulseJSON

/// `pulsegate-bench json-loop <workload> <iterations>`: runs one benchmark workload in a plain
/// loop, untimed, so a profiler (perf, valgrind --tool=callgrind) sees only that workload.
enum JSONLoop {
    static let workloads = [
        "parse-otlp", "parse-batch", "walk-otlp", "walk-batch", "value-otlp", "value-batch", "write-batch",
        "foundation-parse-otlp", "foundation-parse-batch", "foundation-decode-otlp", "foundation-decode-batch",
        "foundation-encode-batch", "none",
    ]

    static func run(_ workload: String, iterations: Int) -> Bool {
        let otlp = SampleDocuments.otlpLogs()
        let batch = SampleDocuments.pulseBatch()
        let otlpData = Data(otlp)
        let batchData = Data(batch)
        let parser = JSONParser()
        guard let model = try? FastPaths.pulseBatch(parser.parse(batch).root).mirror else { return false }
        let step: () throws -> Int
        switch workload {
        case "parse-otlp": step = { try parser.parse(otlp).nodeCount }
        case "parse-batch": step = { try parser.parse(batch).nodeCount }
        case "walk-otlp": step = { try FastPaths.otlpLogs(parser.parse(otlp).root).resourceLogs.count }
        case "walk-batch": step = { try FastPaths.pulseBatch(parser.parse(batch).root).events.count }
        case "value-otlp": step = { try parser.parse(otlp).root.value == .null ? 0 : 1 }
        case "value-batch": step = { try parser.parse(batch).root.value == .null ? 0 : 1 }
        case "write-batch": step = { FastPaths.encode(model).count }
        case "foundation-parse-otlp": step = { try JSONSerialization.jsonObject(with: otlpData) is NSNull ? 0 : 1 }
        case "foundation-parse-batch": step = { try JSONSerialization.jsonObject(with: batchData) is NSNull ? 0 : 1 }
        case "foundation-decode-otlp":
            step = { try JSONDecoder().decode(OTLPExportLogsRequest.self, from: otlpData).resourceLogs.count }
        case "foundation-decode-batch":
            step = { try JSONDecoder().decode(PulseBatch.self, from: batchData).events.count }
        case "foundation-encode-batch": step = { try JSONEncoder().encode(model).count }
        case "none": step = { 0 }
        default:
            print("unknown workload \(workload); one of: \(workloads.joined(separator: ", "))")
            return false
        }
        var sink = 0
        do {
            for _ in 0..<iterations { sink &+= try step() }
        } catch {
            print("error: \(error)")
            return false
        }
        print("\(workload): \(iterations) iterations (checksum \(sink))")
        return true
    }
}
