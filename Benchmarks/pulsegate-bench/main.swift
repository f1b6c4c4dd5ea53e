#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `swift run -c release pulsegate-bench <suite>`.
let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "sqlite-ceiling":
    // Raw SQLite group-commit ceiling for scripts/bench-gateway.sh.
    exit(await SQLiteCeiling.run(Array(arguments.dropFirst())) ? 0 : 1)
default:
    print(
        """
        usage: pulsegate-bench sqlite-ceiling [--seconds S] [--concurrency N] [--payload-bytes B] [--dir D]
        """)
    exit(2)
}
