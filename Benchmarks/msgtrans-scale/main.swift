// msgtrans-scale: how much server memory do many mostly idle msgtrans connections cost?
//
// The parent process runs a MsgTransServer and spawns child processes that open plain blocking
// sockets to it (cheap clients, each process below its own open-file limit). The parent reports
// its resident set size (from /proc/self/statm) before the connections, with all of them idle,
// and after every connection has made one request, and divides by the number of connections.
//
//   msgtrans-scale [--connections N] [--processes P]
//
// Internal: `msgtrans-scale --client PORT COUNT` is the child side; it reads commands on stdin
// ("connect", "ping") and answers "ok" on stdout.

import Foundation
import MsgTrans
import MsgTransRuntime
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Shared helpers

func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return -1 }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
    _ = getrlimit(resource, &limit)
    return Int(clamping: limit.rlim_cur)
}

func mebibytes(_ bytes: Int) -> String {
    String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}

// MARK: - Child: raw client sockets

/// Writes one unbuffered answer line to the parent.
func answer(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func runClient(port: Int, count: Int) -> Int32 {
    _ = raiseOpenFileLimit()
    var sockets: [Int32] = []
    sockets.reserveCapacity(count)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")

    while let command = readLine() {
        switch command {
        case "connect":
            for _ in 0..<count {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                guard fd >= 0 else {
                    answer("error socket errno \(errno)")
                    return 1
                }
                let result = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                guard result == 0 else {
                    answer("error connect errno \(errno)")
                    return 1
                }
                sockets.append(fd)
            }
        case "ping":
            let request = Frame(
                packetType: .request, bizType: 2, messageID: 1, payload: Array(#"{"heartbeat":true}"#.utf8)
            ).encoded()
            for fd in sockets {
                _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            for fd in sockets {
                var decoder = FrameDecoder()
                var answered = false
                while !answered {
                    let received = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                    guard received > 0 else {
                        answer("error read")
                        return 1
                    }
                    decoder.append(Array(buffer[0..<received]))
                    answered = (try? decoder.next()) != nil
                }
            }
        default:
            answer("error unknown command \(command)")
            return 1
        }
        answer("ok")
    }
    for fd in sockets {
        close(fd)
    }
    return 0
}

// MARK: - Parent: the server under test

final class ClientProcess {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(port: Int, count: Int) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["--client", String(port), String(count)]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    func send(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    /// Waits for the child's answer to the last command (blocking; the parent has nothing else to do).
    func awaitAnswer() -> String {
        var line: [UInt8] = []
        while true {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first else { return "eof" }
            if first == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(first)
        }
    }

    func finish() {
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
    }
}

func waitFor(_ condition: () -> Bool) async {
    while !condition() {
        try? await Task.sleep(for: .milliseconds(20))
    }
}

func runParent(connections: Int, processes: Int) async throws {
    let limit = raiseOpenFileLimit()
    print("msgtrans-scale: \(connections) idle connections from \(processes) client processes")
    print("open-file limit (soft, raised to hard): \(limit)")
    guard limit > connections + 64 else {
        print("error: the open-file limit is too low for \(connections) server-side sockets")
        exit(1)
    }

    var configuration = MsgTransServerConfiguration()
    configuration.maxConnections = connections + 100
    let server = try await MsgTransServer.start(host: "127.0.0.1", port: 0, configuration: configuration) { _ in
        MsgTransRequestHandler { request, _ in MsgTransReply(Array(#"{"code":0,"msg":null,"data":true}"#.utf8)) }
    }

    let perProcess = (connections + processes - 1) / processes
    var clients: [ClientProcess] = []
    var assigned = 0
    while assigned < connections {
        let count = min(perProcess, connections - assigned)
        clients.append(try ClientProcess(port: server.port, count: count))
        assigned += count
    }

    try await Task.sleep(for: .milliseconds(200))
    let baseline = residentBytes()
    let started = Date()
    for client in clients { client.send("connect") }
    for client in clients {
        let answer = client.awaitAnswer()
        guard answer == "ok" else {
            print("client failed: \(answer)")
            exit(1)
        }
    }
    await waitFor { server.statistics.snapshot().openConnections == connections }
    let acceptSeconds = Date().timeIntervalSince(started)
    try await Task.sleep(for: .milliseconds(200))
    let idle = residentBytes()

    let pingStarted = Date()
    for client in clients { client.send("ping") }
    for client in clients {
        let answer = client.awaitAnswer()
        guard answer == "ok" else {
            print("client failed: \(answer)")
            exit(1)
        }
    }
    let pingSeconds = Date().timeIntervalSince(pingStarted)
    try await Task.sleep(for: .milliseconds(200))
    let afterRequest = residentBytes()

    let stats = server.statistics.snapshot()
    print("server RSS before connections:      \(mebibytes(baseline))")
    print(
        "server RSS with \(connections) idle:  \(mebibytes(idle))  "
            + "(+\(mebibytes(idle - baseline)), \((idle - baseline) / connections) bytes per connection)")
    print(
        "server RSS after 1 request each:     \(mebibytes(afterRequest))  "
            + "(+\(mebibytes(afterRequest - baseline)), \((afterRequest - baseline) / connections) bytes per connection)"
    )
    print(
        String(
            format: "accepted %d connections in %.2f s; %d requests answered in %.2f s", connections,
            acceptSeconds, stats.framesOut, pingSeconds))
    print(
        "server counters: open \(stats.openConnections), frames in \(stats.framesIn), out \(stats.framesOut), "
            + "protocol faults \(stats.protocolFaults), rejected \(stats.rejectedConnections)")

    for client in clients { client.finish() }
    await server.shutdown()
}

// MARK: - Entry

let usage = "usage: msgtrans-scale [--connections N] [--processes P]"
let parsed = FlagParser(
    command: "msgtrans-scale", flags: [.boolean("--client"), .value("--connections"), .value("--processes")],
    allowsPositional: true
).parseOrExit(Array(CommandLine.arguments.dropFirst()), usage: usage)
if parsed.isSet("--client") {
    // The child side: `msgtrans-scale --client PORT COUNT`.
    guard parsed.positional.count == 2, let port = Int(parsed.positional[0]), let count = Int(parsed.positional[1])
    else { FlagParser.exitWithUsageError("--client takes PORT COUNT", usage: usage) }
    exit(runClient(port: port, count: count))
}
if let extra = parsed.positional.first {
    FlagParser.exitWithUsageError("unexpected argument '\(extra)'", usage: usage)
}
let (connections, processes) = FlagParser.exitOnUsageError(usage: usage) { () throws(UsageError) in
    (
        try parsed.integer("--connections", in: 1...Int.max, command: "msgtrans-scale") ?? 10_000,
        try parsed.integer("--processes", in: 1...Int.max, command: "msgtrans-scale") ?? 2
    )
}
try await runParent(connections: connections, processes: processes)
