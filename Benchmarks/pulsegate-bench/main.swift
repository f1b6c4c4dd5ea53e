import PulseKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

let usage = """
    usage: pulsegate-bench json                          PulseJSON vs Foundation (exit 1 below 10x)
           pulsegate-bench json-samples [directory]      write the sample documents
           pulsegate-bench json-loop <workload> <count>  run one workload for a profiler
           pulsegate-bench mapping                       the one walk: type checks, mapping, diagnostics
           pulsegate-bench mapping-loop <count> [file]   map the sample request (or a .json/.pb one) <count> times, for a profiler
           pulsegate-bench stages [protobuf-file]        intake stages per request: parse, walk, encode
           pulsegate-bench decode-loop <count>           decode the protobuf sample <count> times, for a profiler
           pulsegate-bench sqlite-ceiling [--seconds S] [--concurrency N] [--payload-bytes B] [--dir D]
    """

/// `swift run -c release pulsegate-bench <suite>`; exits 1 when a suite's checks or gates fail.
let all = Array(CommandLine.arguments.dropFirst())
// The suite and its positional arguments; `sqlite-ceiling` parses its own flags.
let arguments =
    all.first == "sqlite-ceiling"
    ? all
    : FlagParser(command: "pulsegate-bench", flags: [], allowsPositional: true).parseOrExit(all, usage: usage)
        .positional
switch arguments.first {
case "json":
    exit(JSONBenchmark.run() ? 0 : 1)
case "json-samples":
    // Writes the benchmark's sample documents into the given directory (default docs/examples).
    exit(JSONSampleExport.write(to: arguments.count > 1 ? arguments[1] : "docs/examples") ? 0 : 1)
case "json-loop" where arguments.count == 3 && Int(arguments[2]) != nil:
    // Runs one workload untimed, for profilers.
    exit(JSONLoop.run(arguments[1], iterations: Int(arguments[2])!) ? 0 : 1)
case "mapping":
    // The gateway's one walk over an OTLP/JSON request: type checks, mapping, diagnostics.
    exit(MappingBenchmark.run() ? 0 : 1)
case "mapping-loop" where (2...3).contains(arguments.count) && Int(arguments[1]) != nil:
    // Maps the sample request (or the one in a file) a fixed number of times, untimed, for
    // profilers (callgrind).
    exit(MappingBenchmark.loop(iterations: Int(arguments[1])!, file: arguments.count == 3 ? arguments[2] : nil) ? 0 : 1)
case "stages":
    // The intake's work per request stage by stage (parse/decode, validate, map, encode).
    exit(StageBenchmark.run(protobufPath: arguments.count > 1 ? arguments[1] : nil) ? 0 : 1)
case "decode-loop" where arguments.count == 2 && Int(arguments[1]) != nil:
    // Decodes the protobuf sample a fixed number of times, untimed, for profilers.
    exit(StageBenchmark.decodeLoop(iterations: Int(arguments[1])!) ? 0 : 1)
case "sqlite-ceiling":
    // Raw SQLite group-commit ceiling for scripts/bench-gateway.sh.
    exit(await SQLiteCeiling.run(Array(arguments.dropFirst())) ? 0 : 1)
case _?:
    FlagParser.exitWithUsageError("unknown suite or wrong arguments: \(arguments.joined(separator: " "))", usage: usage)
case nil:
    FlagParser.exitWithUsageError("no suite given", usage: usage)
}
