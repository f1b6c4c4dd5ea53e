import Foundation
import PulseJSON

/// `pulsegate-bench json`: PulseJSON versus Foundation on the two sample documents.
enum JSONBenchmark {
    /// Minimum speedup over Foundation required of every PulseJSON operation.
    static let requiredSpeedup = 10.0

    struct Row {
        var document: String
        var foundation: String
        var pulse: String
        var result: Stopwatch.Comparison
    }

    /// Runs the benchmark; returns false if a cross-check fails or any speedup is below 10x.
    ///
    /// Each Foundation operation is compared with the PulseJSON operation that produces the same
    /// kind of result: JSONSerialization (an untyped tree) with parse + a visit of every node;
    /// JSONDecoder (typed structs) with parse + extraction of every field into the same structs
    /// (for the batch: the gateway's model, attributes as ordered `[JSONMember]`); JSONEncoder
    /// with JSONWriter, both encoding the same `PulseBatch` value.
    static func run() -> Bool {
        let otlp = SampleDocuments.otlpLogs()
        let batch = SampleDocuments.pulseBatch()
        print("PulseJSON benchmark: thread CPU time per document (best round), speedup = median of paired rounds")
        print("  OTLP logs export request: \(otlp.count) bytes, 20 log records")
        print("  Pulse event batch:        \(batch.count) bytes, 64 events")
        guard verify(otlp: otlp, batch: batch) else { return false }

        let parser = JSONParser()
        let otlpData = Data(otlp)
        let batchData = Data(batch)
        let decoder = JSONDecoder()
        let encoder = JSONEncoder()
        let model = try! decoder.decode(PulseBatch.self, from: batchData)

        /// The two reading rows of one document: JSONSerialization against parse + visit all, and
        /// JSONDecoder (`decode`) against parse + extract (`extract`), each returning a count.
        func readingRows(
            _ document: String, _ bytes: [UInt8], _ data: Data, decode: (Data) -> Int, extract: (JSONNode) -> Int
        ) -> [Row] {
            [
                Row(
                    document: document, foundation: "JSONSerialization", pulse: "parse + visit all",
                    result: Stopwatch.compare(
                        baseline: { untypedCount(data) },
                        candidate: { FastPaths.visitAll(try! parser.parse(bytes).root) })),
                Row(
                    document: document, foundation: "JSONDecoder", pulse: "parse + extract",
                    result: Stopwatch.compare(
                        baseline: { decode(data) }, candidate: { extract(try! parser.parse(bytes).root) })),
            ]
        }
        let rows =
            readingRows(
                "OTLP logs", otlp, otlpData,
                decode: { try! decoder.decode(OTLPExportLogsRequest.self, from: $0).resourceLogs.count },
                extract: { try! FastPaths.otlpLogs($0).resourceLogs.count })
            + readingRows(
                "Pulse batch", batch, batchData,
                decode: { try! decoder.decode(PulseBatch.self, from: $0).events.count },
                extract: { try! FastPaths.pulseBatch($0).events.count })
            + [
                Row(
                    document: "Pulse batch", foundation: "JSONEncoder", pulse: "JSONWriter",
                    result: Stopwatch.compare(
                        baseline: { try! encoder.encode(model).count },
                        candidate: { FastPaths.encode(model).count }))
            ]

        print("")
        print(
            [
                pad("document", 13), pad("Foundation", 19), padLeft("µs", 7), "   ", pad("PulseJSON", 19),
                padLeft("µs", 7), padLeft("speedup", 9),
            ].joined())
        var passed = true
        for row in rows {
            let ok = row.result.speedup >= requiredSpeedup
            passed = passed && ok
            print(
                [
                    pad(row.document, 13), pad(row.foundation, 19), padLeft(format(row.result.baseline), 7), "   ",
                    pad(row.pulse, 19), padLeft(format(row.result.candidate), 7),
                    padLeft(format(row.result.speedup) + "x", 9), ok ? "" : "  below \(Int(requiredSpeedup))x",
                ].joined())
        }

        print("")
        print("For reference (not gated):")
        for (name, bytes, data) in [("OTLP logs", otlp, otlpData), ("Pulse batch", batch, batchData)] {
            let parseOnly = Stopwatch.microsPerCall { try! parser.parse(bytes).nodeCount }
            let tree = Stopwatch.compare(
                baseline: { untypedCount(data) },
                candidate: { try! parser.parse(bytes).root.value == .null ? 0 : 1 })
            print(
                "  \(pad(name, 12)) parse only \(format(parseOnly)) µs; parse + JSONValue tree"
                    + " \(format(tree.candidate)) µs (\(format(tree.speedup))x JSONSerialization)")
        }
        print("")
        print(
            passed
                ? "PASS: every PulseJSON operation is at least \(Int(requiredSpeedup))x faster than its Foundation counterpart"
                : "FAIL: a PulseJSON operation is less than \(Int(requiredSpeedup))x faster than its Foundation counterpart"
        )
        return passed
    }

    /// JSONSerialization's untyped parse (its result is fully built; the count keeps it used).
    static func untypedCount(_ data: Data) -> Int {
        ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?.count ?? 0
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
