import Foundation
import PulseJSON

/// `pulsegate-bench json`: PulseJSON versus Foundation on the two sample documents.
enum JSONBenchmark {
    /// Minimum speedup over Foundation required of every PulseJSON path.
    static let requiredSpeedup = 10.0

    struct Row {
        var document: String
        var operation: String
        var foundation: (name: String, micros: Double)
        var pulse: (name: String, micros: Double)
        var speedup: Double { foundation.micros / pulse.micros }
    }

    /// Runs the benchmark; returns false if a check or the speedup gate fails.
    static func run() -> Bool {
        let otlp = SampleDocuments.otlpLogs()
        let batch = SampleDocuments.pulseBatch()
        print("PulseJSON benchmark (µs of thread CPU time per document, best of \(Stopwatch.rounds) rounds)")
        print("  OTLP logs export request: \(otlp.count) bytes, 20 log records")
        print("  Pulse event batch:        \(batch.count) bytes, 64 events")
        guard verify(otlp: otlp, batch: batch) else { return false }

        var rows: [Row] = []
        rows += parseRows(document: "OTLP logs", bytes: otlp, as: OTLPExportLogsRequest.self) {
            try FastPaths.otlpLogs($0).resourceLogs.count
        }
        rows += parseRows(document: "Pulse batch", bytes: batch, as: PulseBatch.self) {
            try FastPaths.pulseBatch($0).events.count
        }
        rows.append(encodeRow(batch: batch))

        print("")
        let header = [
            pad("document", 12), pad("operation", 16), pad("Foundation", 22), padLeft("µs", 9), "  ",
            pad("PulseJSON", 22), padLeft("µs", 8), padLeft("speedup", 9),
        ]
        print(header.joined())
        var passed = true
        for row in rows {
            let ok = row.speedup >= requiredSpeedup
            passed = passed && ok
            print(
                [
                    pad(row.document, 12), pad(row.operation, 16), pad(row.foundation.name, 22),
                    padLeft(format(row.foundation.micros), 9), "  ", pad(row.pulse.name, 22),
                    padLeft(format(row.pulse.micros), 8), padLeft(format(row.speedup) + "x", 9),
                    ok ? "" : "  < \(Int(requiredSpeedup))x",
                ].joined())
        }
        print("")
        print("PulseJSON breakdown (not gated):")
        for (name, bytes) in [("OTLP logs", otlp), ("Pulse batch", batch)] {
            let parser = JSONParser()
            let parseOnly = Stopwatch.microsPerCall { try! parser.parse(bytes).nodeCount }
            let materialize = Stopwatch.microsPerCall {
                if case .object(let members) = try! parser.parse(bytes).root.value { return members.count }
                return 0
            }
            print(
                "  \(pad(name, 12)) parse only \(format(parseOnly)) µs, parse + JSONValue \(format(materialize)) µs")
        }
        print("")
        print(
            passed
                ? "PASS: every PulseJSON path is at least \(Int(requiredSpeedup))x faster than Foundation"
                : "FAIL: a PulseJSON path is less than \(Int(requiredSpeedup))x faster than Foundation")
        return passed
    }

    /// Checks that both implementations read the same structs and that our encoding reads back.
    static func verify(otlp: [UInt8], batch: [UInt8]) -> Bool {
        do {
            let parser = JSONParser()
            let decoder = JSONDecoder()
            let otlpOurs = try FastPaths.otlpLogs(parser.parse(otlp).root)
            let otlpTheirs = try decoder.decode(OTLPExportLogsRequest.self, from: Data(otlp))
            let batchOurs = try FastPaths.pulseBatch(parser.parse(batch).root)
            let batchTheirs = try decoder.decode(PulseBatch.self, from: Data(batch))
            let reencoded = try decoder.decode(PulseBatch.self, from: Data(FastPaths.encode(batchTheirs)))
            guard otlpOurs == otlpTheirs, otlpOurs.resourceLogs.first?.scopeLogs.first?.logRecords.count == 20,
                batchOurs.mirror == batchTheirs, batchOurs.events.count == 64, reencoded == batchTheirs
            else {
                print("FAIL: PulseJSON and Foundation disagree on the sample documents")
                return false
            }
            return true
        } catch {
            print("FAIL: sample documents did not decode: \(error)")
            return false
        }
    }

    static func parseRows<T: Decodable>(
        document: String, bytes: [UInt8], as type: T.Type, walk: @escaping (JSONNode) throws -> Int
    ) -> [Row] {
        let data = Data(bytes)
        let parser = JSONParser()
        let decoder = JSONDecoder()
        let ours = Stopwatch.microsPerCall {
            let document = try! parser.parse(bytes)
            return try! walk(document.root)
        }
        let serialization = Stopwatch.microsPerCall {
            let object = try! JSONSerialization.jsonObject(with: data)
            return (object as? [String: Any])?.count ?? 0
        }
        let decodable = Stopwatch.microsPerCall {
            let value = try! decoder.decode(T.self, from: data)
            return value is Int ? 0 : 1
        }
        return [
            Row(
                document: document, operation: "parse", foundation: ("JSONSerialization", serialization),
                pulse: ("parse + walk to structs", ours)),
            Row(
                document: document, operation: "decode structs", foundation: ("JSONDecoder", decodable),
                pulse: ("parse + walk to structs", ours)),
        ]
    }

    static func encodeRow(batch bytes: [UInt8]) -> Row {
        let batch = try! JSONDecoder().decode(PulseBatch.self, from: Data(bytes))
        let encoder = JSONEncoder()
        let theirs = Stopwatch.microsPerCall { try! encoder.encode(batch).count }
        let ours = Stopwatch.microsPerCall { FastPaths.encode(batch).count }
        return Row(
            document: "Pulse batch", operation: "encode structs", foundation: ("JSONEncoder", theirs),
            pulse: ("JSONWriter", ours))
    }

    static func format(_ value: Double) -> String {
        value >= 100 ? String(Int(value.rounded())) : String(Double(Int((value * 10).rounded())) / 10)
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? " " + text : String(repeating: " ", count: width - text.count) + text
    }
}
