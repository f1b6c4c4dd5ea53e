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

import BenchSupport
import Foundation
import MsgTrans
import MsgTransRuntime
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Child: raw client sockets

/// Opens `count` sockets on "connect"; sends one request on each and reads its answer on "ping".
func runClient(port: Int, count: Int) -> Int32 {
    runClientCommands(port: port, count: count, noDelay: false, opens: "connect") { command, sockets in
        guard command == "ping" else { return "error unknown command \(command)" }
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
                guard received > 0 else { return "error read" }
                decoder.append(Array(buffer[0..<received]))
                answered = (try? decoder.next()) != nil
            }
        }
        return nil
    }
}

// MARK: - Parent: the server under test

/// Sends `text` to every child; exits when one of them failed.
func command(_ clients: [ClientProcess], _ text: String) {
    if let answer = ClientProcess.command(clients, text) {
        print("client failed: \(answer)")
        exit(1)
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

    let clients = try ClientProcess.spawn(connections: connections, processes: processes, port: server.port)

    try await Task.sleep(for: .milliseconds(200))
    let baseline = residentBytes()
    let started = Date()
    command(clients, "connect")
    await waitFor { server.statistics.snapshot().openConnections == connections }
    let acceptSeconds = Date().timeIntervalSince(started)
    try await Task.sleep(for: .milliseconds(200))
    let idle = residentBytes()

    let pingStarted = Date()
    command(clients, "ping")
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
// The child side: `msgtrans-scale --client PORT COUNT`.
exitIfClient(parsed, usage: usage, runClient)
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
