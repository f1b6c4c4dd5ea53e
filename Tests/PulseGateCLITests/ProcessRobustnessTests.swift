import Foundation
import PulseGateway
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseGateCLI

#if canImport(Glibc)
    import Glibc
#endif

/// The real `pulsegate` binary against broken log streams, a shared data directory, a busy port and
/// storage that stops committing.
@Suite(.serialized) struct ProcessRobustnessTests {
    static let debugConfig = #"{"logLevel":"debug"}"#

    static func writeConfig(_ root: ScratchDirectory, _ json: String = debugConfig) throws -> String {
        let path = root.path + "/gateway.json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func post(port: Int, _ batchID: String, filler: String = "") async throws -> RawHTTPResponse {
        let record = Payload.record(
            1_700_000_000, attributes: [Payload.string("log.record.uid", batchID), Payload.string("filler", filler)])
        return try await GatewayHTTP.post(port: port, Payload.logs(records: [record]), batchID: batchID)
    }

    static func dropped(port: Int) async throws -> Double {
        try #require(try await GatewayHTTP.metric(port: port, "pulsegate_log_lines_dropped_total"))
    }

    // MARK: - Log streams

    @Test func serveWithStandardErrorOnDevFullKeepsServingAndCountsDroppedLines() async throws {
        try await withPulsegate("devfull") { executable, root in
            let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
            let port = try unusedLoopbackPort()
            let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            let child = try launch(
                executable,
                [
                    "serve", "--listen", "127.0.0.1:\(port)", "--upstream", ingest.address.description, "--data-dir",
                    root.path + "/gateway", "--config", try Self.writeConfig(root),
                ], output: full, error: full)
            defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }

            // Every log line fails with ENOSPC: "gateway listening" and one access line per request.
            let up = await eventually(within: .seconds(60)) {
                (try? await GatewayHTTP.request(port: port, "GET", "/livez", headers: []).status) == 200
            }
            #expect(up, "the gateway did not come up (exit \(child.isRunning ? "-" : "\(child.terminationStatus)"))")
            try await Self.expectServing(child, port: port, ingest: ingest, batches: 3, dropped: 4)
        }
    }

    @Test func serveKeepsServingWhenTheReaderOfItsStandardErrorExits() async throws {
        try await withPulsegate("sigpipe") { executable, root in
            let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
            let pipe = Pipe()
            let child = try launch(
                executable,
                [
                    "serve", "--listen", "127.0.0.1:0", "--upstream", ingest.address.description, "--data-dir",
                    root.path + "/gateway", "--config", try Self.writeConfig(root),
                ], output: FileHandle.nullDevice, error: pipe)
            defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
            try? pipe.fileHandleForWriting.close()

            // Like `2>&1 | head -c 300`: read until the listening line, then close the only read end.
            let reader = pipe.fileHandleForReading
            let port = try await onThread { () throws -> Int in
                var text = ""
                while true {
                    let chunk = reader.availableData
                    guard !chunk.isEmpty else { throw TestClientError("stderr closed: \(text)") }
                    text += String(decoding: chunk, as: UTF8.self)
                    if let port = text.split(separator: "\n").lazy.compactMap({ GatewayProcess.listenPort(String($0)) })
                        .first
                    {
                        try reader.close()
                        return port
                    }
                }
            }
            // Each request logs an access line into the pipe nobody reads any more (EPIPE, no SIGPIPE).
            try await Self.expectServing(child, port: port, ingest: ingest, batches: 5, dropped: 5)
        }
    }

    /// A gateway whose log stream fails answers `batches` posts 200 and forwards them, counts at
    /// least `dropped` lost lines, is still running, and stops cleanly.
    static func expectServing(
        _ child: Process, port: Int, ingest: IngestFixture, batches: Int, dropped minimum: Double
    ) async throws {
        for index in 0..<batches {
            #expect(try await post(port: port, "batch-\(index)").status == 200)
        }
        #expect(child.isRunning)
        #expect(try await dropped(port: port) >= minimum)
        #expect(await eventually { (try? await ingest.eventIDs(app: "shop").count) == batches })
        await stopCleanly(child)
        await ingest.stop()
    }

    @Test func ingestWithBothStreamsOnDevFullKeepsServingAndCountsDroppedLines() async throws {
        try await withPulsegate("ingestfull") { executable, root in
            let adminPort = try unusedLoopbackPort()
            let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
            let child = try launch(
                executable,
                [
                    "ingest", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:\(adminPort)", "--data-dir",
                    root.path + "/ingest",
                ], output: full, error: full)
            defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
            // "no --config given" on standard error and "listening on" on standard output both fail.
            let stats = await eventually(within: .seconds(60)) {
                let response = try? await GatewayHTTP.request(port: adminPort, "GET", "/stats", headers: [])
                return response?.status == 200 && response?.bodyText.contains(#""logLinesDropped":2"#) == true
            }
            #expect(stats)
            #expect(child.isRunning)
            await stopCleanly(child)
        }
    }

    @Test func uploadCommandsSurviveAFailingStandardOutputAndKeepWhatTheyQueued() async throws {
        try await withPulsegate("uploadfull") { executable, root in
            let records = root.path + "/records.jsonl"
            try Data(
                """
                {"type":"event","name":"one"}
                {"type":"event","name":"two"}

                """.utf8
            ).write(to: URL(fileURLWithPath: records))
            let common = ["--data-dir", root.path + "/queue", "--app-id", "cli-app", "--no-background"]
            for arguments in [["upload", "enqueue", "--file", records] + common, ["upload", "status"] + common] {
                let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
                let child = try launch(executable, arguments, output: full, error: full)
                await waitForChildExit(child)
                #expect(child.terminationReason == .exit, "\(arguments[1]) died of signal \(child.terminationStatus)")
                #expect(child.terminationStatus == 0, "\(arguments[1])")
            }
            // The acknowledgements were lost, the records were not.
            let status = try await runToExit(executable, ["upload", "status"] + common)
            #expect(status.status == 0)
            #expect(status.standardOutput.contains("queue: 2 records"), "\(status.standardOutput)")
        }
    }

    // MARK: - One process per data directory

    @Test func aSecondServeOnTheSameDataDirectoryIsRefusedAndTheFirstKeepsForwarding() async throws {
        try await withPulsegate("twoserves") { executable, root in
            let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
            let dataDirectory = root.path + "/gateway"
            let first = try await GatewayProcess.start(
                executable: executable, dataDirectory: dataDirectory, upstream: ingest.address)
            defer { if first.process.isRunning { kill(first.process.processIdentifier, SIGKILL) } }
            #expect(try await Self.post(port: first.port, "before").status == 200)

            // Forwarding to the same upstream, and without one (which would start an embedded ingest).
            for upstream in [["--upstream", ingest.address.description], []] {
                let second = try await runToExit(
                    executable, ["serve", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory] + upstream)
                #expect(second.status == 1)
                #expect(
                    second.standardError.contains("the data directory \(dataDirectory) is in use by another process"))
                #expect(second.standardError.contains("(pid \(first.process.processIdentifier))"))
                #expect(!second.standardError.contains("gateway listening"))
            }
            #expect(!FileManager.default.fileExists(atPath: dataDirectory + "/embedded-ingest"))

            #expect(try await Self.post(port: first.port, "after").status == 200)
            #expect(await eventually { (try? await ingest.eventIDs(app: "shop").sorted()) == ["after", "before"] })
            await first.terminate()
            #expect(first.process.terminationStatus == 0)

            // Released at exit: the next gateway on the directory starts.
            let next = try await GatewayProcess.start(
                executable: executable, dataDirectory: dataDirectory, upstream: ingest.address)
            #expect(try await Self.post(port: next.port, "next").status == 200)
            await next.terminate()
            #expect(next.process.terminationStatus == 0)
            await ingest.stop()
        }
    }

    /// Runs `pulsegate <command>` told to listen on the port that an ingest fixture's msgtrans
    /// listener already holds, with data directory `<root>/<dataName>`; it must exit with status 1.
    /// `check` gets its standard error, the port and what it left in its data directory.
    static func expectBusyPortExit(
        _ command: String, label: String, ingestName: String, dataName: String,
        check: (_ standardError: String, _ port: Int, _ left: [String]) -> Void
    ) async throws {
        try await withPulsegate(label) { executable, root in
            let ingest = try await IngestFixture.start(directory: root.path + "/" + ingestName)
            let dataDirectory = root.path + "/" + dataName
            let result = try await runToExit(
                executable, [command, "--listen", "127.0.0.1:\(ingest.port)", "--data-dir", dataDirectory])
            #expect(result.status == 1)
            let left = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
            check(result.standardError, ingest.port, left)
            await ingest.stop()
        }
    }

    @Test func serveOnABusyPortExitsBeforeOpeningDatabasesOrStartingTheEmbeddedUpstream() async throws {
        try await Self.expectBusyPortExit("serve", label: "busyport", ingestName: "ingest", dataName: "gateway") {
            standardError, port, left in
            #expect(standardError.contains("could not listen on 127.0.0.1 port \(port)"))
            #expect(!standardError.contains("embedded reference ingest server"))
            #expect(left.allSatisfy { $0 == "pulsegate.lock" }, "left in the data directory: \(left)")
        }
    }

    @Test func ingestOnABusyPortExitsBeforeCreatingItsDatabase() async throws {
        try await Self.expectBusyPortExit("ingest", label: "ingestbusy", ingestName: "first", dataName: "second") {
            standardError, port, left in
            #expect(standardError.contains("cannot listen on 127.0.0.1:\(port)"), "\(standardError)")
            #expect(left == ["pulsegate.lock"], "left in the data directory: \(left)")
        }
    }

    @Test func aSecondIngestOnTheSameDataDirectoryIsRefusedAndTheFirstKeepsServing() async throws {
        try await withPulsegate("twoingests") { executable, root in
            let dataDirectory = root.path + "/ingest"
            let output = Pipe()
            let first = try launch(
                executable,
                ["ingest", "--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data-dir", dataDirectory],
                output: output, error: FileHandle.nullDevice)
            defer { if first.isRunning { kill(first.processIdentifier, SIGKILL) } }
            let lines = ChildOutputLines(output.fileHandleForReading)
            let started = await eventually(within: .seconds(60)) { lines.all.contains { $0.contains("listening on") } }
            try #require(started, "pulsegate ingest did not start: \(lines.all)")
            let line = try #require(lines.all.first { $0.contains("admin on http://") })
            let admin = try #require(line.split(separator: ",").first { $0.contains("admin on") })
            let adminPort = try #require(Int(admin.split(separator: ":").last ?? ""))

            let second = try await runToExit(
                executable, ["ingest", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory])
            #expect(second.status == 1)
            #expect(second.standardError.contains("the data directory \(dataDirectory) is in use by another process"))
            #expect(second.standardError.contains("(pid \(first.processIdentifier))"))
            #expect(!second.standardOutput.contains("listening on"))

            let stats = try await GatewayHTTP.request(port: adminPort, "GET", "/stats", headers: [])
            #expect(stats.status == 200)
            await stopCleanly(first)
        }
    }

    // MARK: - Readiness

    /// A file system that fills up for real: a small tmpfs mounted for the test (root in CI). Where
    /// mounting is not permitted, the same test runs against a file-size limit of 0 on the gateway
    /// process instead (every write to a file fails with EFBIG), which needs no privileges.
    @Test func readinessIsNotReadyAfterACommitFailsOnAFullDiskAndReadyOnceSpaceIsBack() async throws {
        let root = try ScratchDirectory("fulldisk")
        defer { root.remove() }
        let mountPoint = root.path + "/disk"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try? await runToExit("/bin/mount", ["-t", "tmpfs", "-o", "size=48m", "tmpfs", mountPoint])
        guard mount?.status == 0 else {
            try await checkReadiness(root: root, fault: FileSizeLimitFault())
            return
        }
        var thrown: (any Error)?
        do {
            try await checkReadiness(
                root: root, fault: FullDiskFault(mountPoint: mountPoint), dataDirectory: mountPoint)
        } catch {
            thrown = error
        }
        #expect(try await runToExit("/bin/umount", [mountPoint]).status == 0)
        if let thrown { throw thrown }
    }

    /// The same with the file-size limit (the fallback above), so that both faults stay tested.
    @Test func readinessIsNotReadyAfterACommitFailsUnderAFileSizeLimitAndReadyOnceLifted() async throws {
        let root = try ScratchDirectory("fsizelimit")
        defer { root.remove() }
        try await checkReadiness(root: root, fault: FileSizeLimitFault())
    }

    private func checkReadiness(root: ScratchDirectory, fault: some StorageFault, dataDirectory: String? = nil)
        async throws
    {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let ingest = try await IngestFixture.start(directory: root.path + "/ingest")
        // One request is at most 1 MiB: that much free space is what readiness asks for after a failure.
        let config = try Self.writeConfig(root, #"{"logLevel":"info","maxBodyBytes":1048576}"#)
        let gateway = try await GatewayProcess.start(
            executable: executable, dataDirectory: (dataDirectory ?? root.path) + "/gateway", upstream: ingest.address,
            config: config)
        defer { if gateway.process.isRunning { kill(gateway.process.processIdentifier, SIGKILL) } }
        let port = gateway.port
        #expect(try await Self.post(port: port, "ok-0").status == 200)
        #expect(try await GatewayHTTP.request(port: port, "GET", "/readyz", headers: []).status == 200)

        try fault.inject(gateway.process.processIdentifier)
        // Incompressible 96 KiB records grow the WAL until a commit cannot write.
        var failed: RawHTTPResponse?
        for index in 0..<400 {
            let response = try await Self.post(port: port, "fault-\(index)", filler: randomHex(bytes: 48 * 1024))
            if response.status != 200 {
                failed = response
                break
            }
        }
        let failure = try #require(failed, "no commit failed under \(fault)")
        #expect(failure.status == 503)
        #expect(failure.header("Retry-After") != nil)
        let notReady = try await GatewayHTTP.request(port: port, "GET", "/readyz", headers: [])
        #expect(notReady.status == 503)
        #expect(notReady.bodyText.contains("storage cannot commit"), "\(notReady.bodyText)")
        // Still not ready on the next probe while the fault lasts, and the process is alive.
        #expect(try await GatewayHTTP.request(port: port, "GET", "/readyz", headers: []).status == 503)
        #expect(gateway.process.isRunning)

        try fault.heal(gateway.process.processIdentifier)
        let ready = await eventually(within: .seconds(30)) {
            (try? await GatewayHTTP.request(port: port, "GET", "/readyz", headers: []).status) == 200
        }
        #expect(ready)
        #expect(try await Self.post(port: port, "ok-1").status == 200)
        #expect(gateway.logs.all.contains { $0.contains("intake commit failed") })

        await gateway.terminate()
        #expect(gateway.process.terminationStatus == 0)
        await ingest.stop()
    }
}

/// A fault that stops the gateway's storage from committing, and its repair.
protocol StorageFault: CustomStringConvertible {
    func inject(_ pid: pid_t) throws
    func heal(_ pid: pid_t) throws
}

/// The data directory's tmpfs filled to the last byte by a filler file.
struct FullDiskFault: StorageFault {
    let mountPoint: String
    var filler: String { mountPoint + "/filler" }
    var description: String { "a full tmpfs" }

    func inject(_ pid: pid_t) throws {
        let descriptor = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TestClientError("cannot create \(filler)") }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0x5A, count: 1 << 20)
        var size = chunk.count
        while size > 0 {
            let written = chunk.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, size) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { size /= 2 }  // ENOSPC: fill the rest in smaller pieces
        }
    }

    func heal(_ pid: pid_t) throws {
        try FileManager.default.removeItem(atPath: filler)
    }
}

/// `RLIMIT_FSIZE` of the gateway process lowered to 0 (`prlimit`): every write to a file fails
/// with EFBIG (the gateway ignores `SIGXFSZ`), then restored.
struct FileSizeLimitFault: StorageFault {
    var description: String { "a file-size limit of 0" }

    func inject(_ pid: pid_t) throws { try Self.setLimit(pid, 0) }

    func heal(_ pid: pid_t) throws { try Self.setLimit(pid, rlim_t.max) }

    /// glibc's `prlimit(2)` wrapper (a GNU extension the Glibc module does not export).
    private typealias Prlimit =
        @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?)
        -> Int32

    private static func setLimit(_ pid: pid_t, _ soft: rlim_t) throws {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prlimit") else {
            throw TestClientError("prlimit is not available")
        }
        let prlimit = unsafeBitCast(symbol, to: Prlimit.self)
        var limit = rlimit(rlim_cur: soft, rlim_max: rlim_t.max)
        guard prlimit(pid, Int32(RLIMIT_FSIZE.rawValue), &limit, nil) == 0 else {
            throw TestClientError("prlimit failed: errno \(errno)")
        }
    }
}

/// What a finished child wrote and how it exited.
struct ChildResult {
    var status: Int32
    var standardOutput: String
    var standardError: String
}

/// SIGTERM, then expects a clean exit (status 0, not a signal).
func stopCleanly(_ child: Process, sourceLocation: SourceLocation = #_sourceLocation) async {
    kill(child.processIdentifier, SIGTERM)
    await waitForChildExit(child)
    #expect(child.terminationReason == .exit, sourceLocation: sourceLocation)
    #expect(child.terminationStatus == 0, sourceLocation: sourceLocation)
}

/// Runs `executable` to its exit (at most 60 s), collecting both streams.
func runToExit(_ executable: String, _ arguments: [String]) async throws -> ChildResult {
    let output = Pipe()
    let errors = Pipe()
    let child = try launch(executable, arguments, output: output, error: errors)
    let outputLines = ChildOutputLines(output.fileHandleForReading)
    let errorLines = ChildOutputLines(errors.fileHandleForReading)
    let exited = await eventually(within: .seconds(60)) {
        !child.isRunning && outputLines.isFinished && errorLines.isFinished
    }
    if !exited { kill(child.processIdentifier, SIGKILL) }
    await waitForChildExit(child)
    return ChildResult(
        status: child.terminationStatus, standardOutput: outputLines.all.joined(separator: "\n"),
        standardError: errorLines.all.joined(separator: "\n"))
}

/// A loopback TCP port that was free a moment ago (bound to port 0, then closed).
func unusedLoopbackPort() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw TestClientError("socket failed") }
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
            bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
        }
    }
    guard bound else { throw TestClientError("bind failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// `bytes` random bytes as hex (incompressible enough to grow the database).
func randomHex(bytes: Int) -> String {
    var generator = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdef".utf8)
    var text = [UInt8]()
    text.reserveCapacity(bytes * 2)
    for _ in 0..<bytes {
        let byte = UInt8.random(in: 0...255, using: &generator)
        text.append(digits[Int(byte >> 4)])
        text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
}

/// The stream writer itself, on real pipes.
@Suite struct StandardStreamWriterTests {
    /// A pipe: (read end, write end), both ends non-blocking when asked.
    static func pipe(nonBlocking: Bool) throws -> (Int32, Int32) {
        var ends: [Int32] = [0, 0]
        guard Glibc.pipe(&ends) == 0 else { throw TestClientError("pipe failed") }
        if nonBlocking {
            for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
        }
        return (ends[0], ends[1])
    }

    @Test func aPipeWithoutReaderDropsAndCountsInsteadOfRaisingSIGPIPE() throws {
        PulseGateCommandLine.prepareProcess()
        let (reader, writer) = try Self.pipe(nonBlocking: false)
        defer { close(writer) }
        close(reader)
        let stream = StandardStreamWriter(descriptor: writer)
        #expect(!stream.write("one\n"))
        #expect(!stream.write("two\n"))
        #expect(stream.dropped == 2)
    }

    @Test func aFullNonBlockingPipeWaitsUpToTheStallLimitThenDropsAndRecovers() throws {
        let (reader, writer) = try Self.pipe(nonBlocking: true)
        defer {
            close(reader)
            close(writer)
        }
        let stream = StandardStreamWriter(descriptor: writer, stallLimitMilliseconds: 100)
        // Fill the pipe (64 KiB by default) so that the next write gets EAGAIN.
        let chunk = String(repeating: "x", count: 4095) + "\n"
        var written = 0
        while written < 1 << 22, stream.write(chunk) { written += chunk.utf8.count }
        #expect(written >= 4096, "the pipe took nothing")
        #expect(stream.dropped == 1)
        let started = ContinuousClock.now
        #expect(!stream.write("late\n"))
        #expect(ContinuousClock.now - started >= .milliseconds(90))
        #expect(stream.dropped == 2)
        // Once the reader catches up, lines go through again.
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while buffer.withUnsafeMutableBytes({ read(reader, $0.baseAddress, $0.count) }) > 0 {}
        #expect(stream.write("again\n"))
        #expect(stream.dropped == 2)
    }
}
