// ingest-bench: numbers for the reference Pulse ingest server (PulseIngest).
//
//   ingest-bench throughput [--connections N] [--batches B] [--events E] [--window W]
//       N raw-socket clients each connect, then upload B event batches of E events (zstd), keeping
//       up to W requests in flight; prints batches/s, events/s and commits. Every acknowledgement
//       means the batch was committed with fsync. Also prints the server's CPU time per batch.
//       --ulid uses time-ordered (ULID-like) event ids instead of random ones; --prepare-only stops
//       after encoding the frames (the baseline of a callgrind comparison).
//   ingest-bench idle [--connections N] [--processes P] [--sequential]
//       Server RSS with N idle connections, before and after each completed CLIENT_CONNECT (all
//       CONNECTs written at once, or one at a time per client process with --sequential).
//
// Internal: `ingest-bench --client PORT COUNT` is the child side of `idle`.

import BenchSupport
import Foundation
import MsgTrans
import MsgTransRuntime
import PulseIngest
import PulseKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// MARK: - Helpers

/// glibc's `malloc_trim(0)` (not exported by the Glibc module): returns free heap pages to the system.
func trimHeap() {
    typealias Trim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
}

/// User plus system CPU time of this process so far, in microseconds (`/proc/self/stat` fields 14 and 15).
func processCPUMicroseconds() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return -1 }
    // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return -1 }
    return (user + system) * 1_000_000 / Int(sysconf(Int32(_SC_CLK_TCK)))
}

/// CPU time of the calling thread, in microseconds.
func threadCPUMicroseconds() -> Int {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return time.tv_sec * 1_000_000 + time.tv_nsec / 1_000
}

/// The 1-minute load average, as `/proc/loadavg` reports it.
func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
    return String(text.split(separator: " ").first ?? "?")
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("ingest-bench: \(message)\n".utf8))
    exit(1)
}

func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let written = bytes.withUnsafeBytes {
            send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        if written <= 0 { return false }
        offset += written
    }
    return true
}

/// Reads frames from a blocking socket.
struct FrameReader {
    let fd: Int32
    var decoder = FrameDecoder()
    var buffer = [UInt8](repeating: 0, count: 65_536)

    init(fd: Int32) {
        self.fd = fd
    }

    mutating func next() -> Frame? {
        while true {
            if let frame = try? decoder.next() { return frame }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return nil }
            decoder.append(Array(buffer[0..<count]))
        }
    }
}

let acknowledgement = Array(#"{"code":0,"msg":null,"data":true}"#.utf8)

func connectPayload(device: String) -> [UInt8] {
    Array(
        """
        {"protocolVersion":2,"appId":"bench_app","deviceId":"\(device)","installationId":"inst-\(device)",\
        "platform":"ios","deviceType":"phone","packageName":"com.example.bench","appVersion":"1.0",\
        "buildNumber":100,"sdkVersion":"2.3.0","capabilities":["batch_upload","compression:zstd"]}
        """.utf8)
}

func connectFrame(device: String, id: UInt32) -> [UInt8] {
    Frame(packetType: .request, bizType: 1, messageID: id, payload: connectPayload(device: device)).encoded()
}

/// Event ids: random (UUIDv4-like, 32 hex) or time-ordered (ULID-like: 12 hex digits of a
/// millisecond clock that advances per batch, then a per-batch counter and random bits).
enum EventIDs: String {
    case random, ulid
}

func eventID(_ kind: EventIDs, batch: Int, index: Int, using generator: inout SystemRandomNumberGenerator) -> String {
    switch kind {
    case .random:
        return String(generator.next(), radix: 16) + String(generator.next(), radix: 16)
    case .ulid:
        let millis = String(1_764_400_000_000 + batch, radix: 16)
        let counter = String(index, radix: 16)
        let random = String(generator.next() >> 24, radix: 16)
        let head = String(repeating: "0", count: 12 - millis.count) + millis
        let middle = String(repeating: "0", count: 4 - counter.count) + counter
        return head + middle + String(repeating: "0", count: 16 - random.count) + random
    }
}

func eventBatch(device: String, batch: Int, events: Int, ids: EventIDs = .random) -> [UInt8] {
    var json = """
        {"identity":{"projectId":"bench_app","installationId":"inst-\(device)","deviceId":"\(device)",\
        "userId":null,"appVersion":"1.0","buildNumber":100,"sdkVersion":"2.3.0","platform":"ios",\
        "packageName":"com.example.bench"},"events":[
        """
    var generator = SystemRandomNumberGenerator()
    let names = ["screen_view", "tap", "http_request", "frame_drop", "purchase", "search"]
    let screens = ["home", "search", "product", "cart", "checkout", "settings", "profile"]
    for index in 0..<events {
        if index > 0 { json += "," }
        // Unique per event (the database key).
        let id = eventID(ids, batch: batch, index: index, using: &generator)
        let trace = String(generator.next(), radix: 16)
        json += """
            {"id":"\(id)","timestamp":\(1_764_400_000_000 + Int(generator.next() % 1_000_000)),\
            "sessionId":"s-\(device)","kind":"\(index % 3 == 0 ? "Network" : "Analytics")",\
            "name":"\(names[Int(generator.next() % 6)])","source":{"module":"ShopKit","imageUuid":null},\
            "attributes":{"screen":"\(screens[Int(generator.next() % 7)])","step":\(index),\
            "duration_ms":\(Double(generator.next() % 100_000) / 10),"trace_id":"\(trace)",\
            "cached":\(generator.next() % 2 == 0)}}
            """
    }
    json += #"],"batchId":"b-\#(device)-\#(batch)"}"#
    return Array(json.utf8)
}

// MARK: - Throughput

/// With `prepareOnly`, stops after encoding the frames: `valgrind --tool=callgrind` runs of both kinds
/// let the client-side preparation be subtracted from the instruction count (scripts/bench-ingest.sh).
func runThroughput(
    connections: Int, batches: Int, events: Int, window: Int, ids: EventIDs, prepareOnly: Bool
) async throws {
    _ = raiseOpenFileLimit()
    let directory = NSTemporaryDirectory() + "ingest-bench-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var configuration = IngestConfiguration(dataDirectory: directory, policy: .acceptingEveryApp)
    configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
    configuration.maxPendingBatches = max(1_024, connections * window)
    let server = try await IngestServer.start(configuration)
    let port = server.port

    print("ingest-bench throughput: \(connections) connections × \(batches) batches × \(events) events, zstd,")
    print("  window \(window) in flight per connection, \(ids.rawValue) event ids; data in \(directory)")
    // Pre-encode every frame so the clients spend no CPU on JSON or zstd while measuring.
    var frames: [[[UInt8]]] = []
    var plaintextBytes = 0
    var wireBytes = 0
    for connection in 0..<connections {
        var list: [[UInt8]] = []
        for batch in 0..<batches {
            let plaintext = eventBatch(device: "d\(connection)", batch: batch, events: events, ids: ids)
            let frame = try Frame.make(
                packetType: .request, bizType: 5, messageID: UInt32(batch + 2), plaintext: plaintext, preferred: .zstd)
            plaintextBytes += plaintext.count
            wireBytes += frame.payload.count
            list.append(frame.encoded())
        }
        frames.append(list)
    }
    let total = connections * batches
    print(
        "  batch size: \(plaintextBytes / total) bytes JSON, \(wireBytes / total) bytes zstd on the wire")
    if prepareOnly {
        await server.shutdown()
        return
    }

    // Connect every client first.
    var sockets: [Int32] = []
    for connection in 0..<connections {
        guard let fd = openSocket(port: port, noDelay: true) else { fail("connect failed") }
        guard writeAll(fd, connectFrame(device: "d\(connection)", id: 1)) else { fail("write failed") }
        var reader = FrameReader(fd: fd)
        guard let response = reader.next(), response.messageID == 1 else { fail("no connect response") }
        sockets.append(fd)
    }

    let failures = Atomic<Int>(0)
    let clientCPU = Atomic<Int>(0)
    let done = DispatchGroup()
    let before = server.statistics()
    let cpuBefore = processCPUMicroseconds()
    let started = Date()
    for (index, fd) in sockets.enumerated() {
        let list = frames[index]
        done.enter()
        Thread {
            let threadStart = threadCPUMicroseconds()
            defer { clientCPU.add(threadCPUMicroseconds() - threadStart, ordering: .relaxed) }
            var reader = FrameReader(fd: fd)
            var sent = 0
            var received = 0
            while received < list.count {
                var burst: [UInt8] = []
                while sent < list.count && sent - received < window {
                    burst += list[sent]
                    sent += 1
                }
                if !burst.isEmpty && !writeAll(fd, burst) {
                    failures.add(1, ordering: .relaxed)
                    break
                }
                guard let frame = reader.next() else {
                    failures.add(1, ordering: .relaxed)
                    break
                }
                if frame.payload != acknowledgement {
                    failures.add(1, ordering: .relaxed)
                }
                received += 1
            }
            done.leave()
        }.start()
    }
    await withCheckedContinuation { continuation in
        done.notify(queue: .global()) { continuation.resume() }
    }
    let seconds = Date().timeIntervalSince(started)
    let serverCPU = processCPUMicroseconds() - cpuBefore - clientCPU.load(ordering: .relaxed)
    let after = server.statistics()
    let commits = after.commits - before.commits
    let jobs = after.committedJobs - before.committedJobs
    let stored = after.apps["bench_app"]?.events ?? 0
    print(String(format: "  %d batches (%d events) acknowledged in %.2f s", total, total * events, seconds))
    print(String(format: "  %.0f batches/s, %.0f events/s", Double(total) / seconds, Double(total * events) / seconds))
    print(
        String(
            format: "  %d commits (fsync) for %d jobs: %.1f batches per commit; %d events stored; failures %d",
            commits, jobs, Double(jobs) / Double(max(1, commits)), stored, failures.load(ordering: .relaxed)))
    print(
        String(
            format: "  server CPU %.0f µs per batch (process CPU minus the client threads'); load average %@",
            Double(serverCPU) / Double(total), loadAverage()))
    for fd in sockets { close(fd) }
    await server.shutdown()
    if failures.load(ordering: .relaxed) > 0 || stored != total * events {
        fail("not every batch was acknowledged and stored")
    }
}

// MARK: - Idle connections

/// Child process: opens `count` sockets on "open", completes CLIENT_CONNECT on each on "connect".
func runClient(port: Int, count: Int) -> Int32 {
    runClientCommands(port: port, count: count, noDelay: true, opens: "open") { command, sockets in
        guard command == "connect" || command == "connect-sequential" else { return "error unknown command \(command)" }
        // "connect": every CONNECT is written first (a burst of concurrent handshakes);
        // "connect-sequential": one handshake at a time.
        let sequential = command == "connect-sequential"
        let pid = getpid()
        var pending: [Int32] = []
        for (index, fd) in sockets.enumerated() {
            guard writeAll(fd, connectFrame(device: "p\(pid)-\(index)", id: 1)) else { return "error write" }
            pending.append(fd)
            if sequential || index == sockets.count - 1 {
                for fd in pending {
                    var reader = FrameReader(fd: fd)
                    guard let frame = reader.next(), frame.packetType == .response else { return "error read" }
                }
                pending.removeAll()
            }
        }
        return nil
    }
}

func command(_ clients: [ClientProcess], _ text: String) {
    if let reply = ClientProcess.command(clients, text) { fail("client: \(reply)") }
}

func runIdle(connections: Int, processes: Int, sequential: Bool) async throws {
    let limit = raiseOpenFileLimit()
    guard limit > connections + 64 else { fail("open-file limit \(limit) is too low for \(connections) sockets") }
    let directory = NSTemporaryDirectory() + "ingest-bench-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var configuration = IngestConfiguration(dataDirectory: directory, policy: .acceptingEveryApp)
    configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
    configuration.transport.maxConnections = connections + 100
    let server = try await IngestServer.start(configuration)
    print(
        "ingest-bench idle: \(connections) connections from \(processes) client processes, "
            + (sequential ? "one CONNECT at a time per process" : "all CONNECTs at once"))

    let clients = try ClientProcess.spawn(connections: connections, processes: processes, port: server.port)
    try await Task.sleep(for: .milliseconds(300))
    let baseline = residentBytes()

    command(clients, "open")
    while server.statistics().openConnections < connections {
        try await Task.sleep(for: .milliseconds(20))
    }
    try await Task.sleep(for: .milliseconds(300))
    let opened = residentBytes()

    let started = Date()
    command(clients, sequential ? "connect-sequential" : "connect")
    let connectSeconds = Date().timeIntervalSince(started)
    try await Task.sleep(for: .milliseconds(300))
    let connected = residentBytes()
    // What of that is live memory rather than free heap the allocator kept after the burst of
    // 10,000 concurrent connect handlers.
    trimHeap()
    let trimmed = residentBytes()
    let stats = server.statistics()

    print("  server RSS before connections:          \(mebibytes(baseline))")
    print(
        "  with \(connections) open, not yet connected:  \(mebibytes(opened))  (+\(mebibytes(opened - baseline)), "
            + "\((opened - baseline) / connections) bytes per connection)")
    print(
        "  with \(connections) connected Pulse sessions: \(mebibytes(connected))  "
            + "(+\(mebibytes(connected - baseline)), \((connected - baseline) / connections) bytes per connection)")
    print(
        "  the same after malloc_trim(0):         \(mebibytes(trimmed))  "
            + "(+\(mebibytes(trimmed - baseline)), \((trimmed - baseline) / connections) bytes per connection)")
    print(
        String(
            format: "  %d CLIENT_CONNECTs (each committed to the history) in %.2f s; %d commits; sessions %d",
            connections, connectSeconds, stats.commits, stats.apps.values.reduce(0) { $0 + $1.sessions }))
    for client in clients { client.finish() }
    await server.shutdown()
}

// MARK: - Entry

let usage = """
    usage: ingest-bench throughput [--connections N] [--batches B] [--events E] [--window W] [--ulid]
                              [--prepare-only]
           ingest-bench idle [--connections N] [--processes P] [--sequential]
    """
let parsed = FlagParser(
    command: "ingest-bench",
    flags: [
        .boolean("--client"), .value("--connections"), .value("--batches"), .value("--events"), .value("--window"),
        .value("--processes"), .boolean("--ulid"), .boolean("--prepare-only"), .boolean("--sequential"),
    ],
    allowsPositional: true
).parseOrExit(Array(CommandLine.arguments.dropFirst()), usage: usage)
// The child side of `idle`: `ingest-bench --client PORT COUNT`.
exitIfClient(parsed, usage: usage, runClient)

/// A count flag's value (a whole number of at least 1), else `fallback`.
func option(_ name: String, _ fallback: Int) -> Int {
    FlagParser.exitOnUsageError(usage: usage) { () throws(UsageError) in
        try parsed.integer(name, in: 1...Int.max, command: "ingest-bench")
    } ?? fallback
}

/// Runs `body` on the global executor while the main thread waits: the top level stays synchronous,
/// so the main thread never enters `dispatch_main` (whose `sigsuspend` on a read-only signal mask
/// valgrind 3.19 cannot run), and `valgrind --tool=callgrind ingest-bench …` works.
func runBlocking(_ body: @escaping @Sendable () async throws -> Void) {
    let finished = DispatchSemaphore(value: 0)
    let failure = Mutex<String?>(nil)
    Task {
        do {
            try await body()
        } catch {
            failure.withLock { $0 = "\(error)" }
        }
        finished.signal()
    }
    finished.wait()
    if let message = failure.withLock({ $0 }) {
        fail(message)
    }
}

switch parsed.positional.first ?? "" {
case "throughput":
    let prepareOnly = parsed.isSet("--prepare-only")
    let ids: EventIDs = parsed.isSet("--ulid") ? .ulid : .random
    let (connections, batches, events, window) = (
        option("--connections", 16), option("--batches", 200), option("--events", 64), option("--window", 8)
    )
    runBlocking {
        try await runThroughput(
            connections: connections, batches: batches, events: events, window: window, ids: ids,
            prepareOnly: prepareOnly)
    }
case "idle":
    let (connections, processes) = (option("--connections", 10_000), option("--processes", 2))
    let sequential = parsed.isSet("--sequential")
    runBlocking {
        try await runIdle(connections: connections, processes: processes, sequential: sequential)
    }
case let other:
    FlagParser.exitWithUsageError(other.isEmpty ? "no benchmark given" : "unknown benchmark '\(other)'", usage: usage)
}
