import Foundation
import PulseGateway
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseUploader

/// `pulsegate upload … --transfer os` against the real gateway and ingest: batches handed to `curl`
/// started detached, the uploader killed right after the hand-over, and the next command settling them.
@Suite(.serialized) struct OSTransferTests {
    init() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// A finished `pulsegate` child's exit status and output.
    struct Finished {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func start(_ arguments: [String], stdin: String? = nil) throws -> (Process, Pipe, Pipe) {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        let process = try launch(
            executable, arguments, input: stdin == nil ? FileHandle.nullDevice : input, output: output, error: errors)
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        return (process, output, errors)
    }

    static func run(_ arguments: [String], stdin: String? = nil) async throws -> Finished {
        let (process, output, errors) = try start(arguments, stdin: stdin)
        let out = ChildOutputLines(output.fileHandleForReading)
        let err = ChildOutputLines(errors.fileHandleForReading)
        await waitForChildExit(process)
        await out.waitForEnd()
        await err.waitForEnd()
        return Finished(
            status: process.terminationStatus, stdout: out.all.joined(separator: "\n"),
            stderr: err.all.joined(separator: "\n"))
    }

    /// The export folders of the OS transfer in `dataDirectory`, and how many have a result.
    static func transfers(_ dataDirectory: String) -> (folders: Int, results: Int) {
        let root = dataDirectory + "/transfers"
        let folders = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter {
            BatchLease(token: $0) != nil
        }
        let results = folders.filter {
            FileManager.default.fileExists(atPath: root + "/" + $0 + "/" + CurlProcessTransfer.resultFileName)
        }
        return (folders.count, results.count)
    }

    /// Batch ids the gateway stored, with their `Apsio-Sent-At` and how often they came again.
    static func gatewayBatches(_ stack: GatewayStack) throws -> [(id: String, sentAt: Int64?, duplicates: Int)] {
        let database = try SQLiteConnection(path: stack.dataDirectory + "/" + GatewayStore.fileName)
        return try database.query("SELECT batch_id, sent_at, duplicates FROM dedup ORDER BY batch_id") { row in
            (try row.column(0, as: String.self), try row.column(1, as: Int64?.self), try row.column(2, as: Int.self))
        }
    }

    @Test func crashReportsTakeTheOSTransferAndBackgroundHandsTheRestTheNextCommandSettles() async throws {
        let stack = try await GatewayStack.start()
        let dataDirectory = stack.root.path + "/uploader"
        let common = ["--data-dir", dataDirectory, "--app-id", "shop", "--endpoint", "http://127.0.0.1:\(stack.port)"]

        // `enqueue --transfer os`: the crash report goes to curl at once; the events wait.
        let enqueued = try await Self.run(
            ["upload", "enqueue", "--transfer", "os"] + common,
            stdin: """
                {"type":"event","name":"checkout"}
                {"type":"crash","crashId":"crash-os-1","message":"SIGSEGV","stack":"#0 main"}
                {"type":"log","body":"after the crash"}

                """)
        #expect(enqueued.status == 0, "\(enqueued.stderr)")
        #expect(Self.transfers(dataDirectory).folders == 1)
        #expect(await eventually { Self.transfers(dataDirectory).results == 1 })

        // `background --transfer os`: seals the rest and hands it over; it settles the crash first.
        let background = try await Self.run(["upload", "background", "--transfer", "os"] + common)
        #expect(background.status == 0, "\(background.stderr)")
        #expect(
            background.stderr.contains("settled 1 transfer results: applied 1 (delivered 1)"), "\(background.stderr)")
        #expect(background.stdout.contains("handed 1 of 1 batches to the OS transfer (curl)"), "\(background.stdout)")
        #expect(await eventually { Self.transfers(dataDirectory).results == 1 })

        // The next command — any command — settles the finished transfer.
        let status = try await Self.run(["upload", "status", "--json"] + common)
        #expect(status.status == 0)
        #expect(status.stderr.contains("settled 1 transfer results: applied 1 (delivered 1)"), "\(status.stderr)")
        #expect(status.stdout.contains(#""totalRecords":0"#), "\(status.stdout)")
        #expect(status.stdout.contains(#""batchesAttempted":2"#))
        #expect(status.stdout.contains(#""batchesSentOk":2"#))
        #expect(Self.transfers(dataDirectory).folders == 0)
        let settle = try await Self.run(["upload", "settle"] + common)
        #expect(
            settle.stdout.contains(
                "settle: 0 transfer results: applied 0, superseded 0, gone 0; 0 transfers still running"))

        // The gateway got both batches once, without Apsio-Sent-At, and forwarded the three records.
        let stored = try Self.gatewayBatches(stack)
        #expect(stored.count == 2)
        #expect(stored.allSatisfy { $0.sentAt == nil && $0.duplicates == 0 })
        #expect(await stack.waitForDelivery(app: "shop", count: 3))
        await stack.stop()
    }

    @Test func theUploaderKilledRightAfterTheHandOverLeavesTheTransfersRunningAndTheNextLaunchSettlesThem()
        async throws
    {
        let stack = try await GatewayStack.start()
        // Each request waits a second in the relay, so curl is still sending when the uploader dies.
        let relay = try DelayingRelay(upstreamPort: stack.port, delay: .seconds(1))
        let dataDirectory = stack.root.path + "/uploader"
        let common = ["--data-dir", dataDirectory, "--app-id", "shop", "--endpoint", "http://127.0.0.1:\(relay.port)"]
        // One enqueue per crash report: three crash batches.
        for index in 1...3 {
            let queued = try await Self.run(
                ["upload", "enqueue", "--no-background"] + common,
                stdin: #"{"type":"crash","crashId":"crash-kill-\#(index)","message":"boom \#(index)"}"# + "\n")
            #expect(queued.status == 0)
        }

        // The foreground loop hands the crash batches to curl, and is killed as soon as it did.
        let (runner, _, _) = try Self.start(["upload", "run", "--transfer", "os"] + common)
        // Handed over: three transfers started (a started transfer opens its log).
        let root = dataDirectory + "/transfers"
        let started: @Sendable () -> Int = {
            ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).filter {
                FileManager.default.fileExists(atPath: root + "/" + $0 + "/transfer.log")
            }.count
        }
        #expect(await eventually { started() == 3 })
        let pid = runner.processIdentifier
        let group = getpgid(pid)
        // Its whole process group when it has one of its own (curl, in its own session, is not in it).
        kill(group == getpgid(0) ? pid : -group, SIGKILL)
        await waitForChildExit(runner)
        #expect(runner.terminationReason == .uncaughtSignal)
        #expect(Self.transfers(dataDirectory).results == 0, "the transfers finished before the uploader died")

        // The transfers complete without it.
        let completed = await eventually { Self.transfers(dataDirectory).results == 3 }
        #expect(completed)
        if !completed {
            for folder in (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [] {
                let log = (try? String(contentsOfFile: root + "/" + folder + "/transfer.log", encoding: .utf8)) ?? "-"
                Issue.record(
                    "\(folder): \((try? FileManager.default.contentsOfDirectory(atPath: root + "/" + folder)) ?? []) log: \(log)"
                )
            }
        }
        // The uploads (the loop's policy fetch, a GET, went through the relay too).
        let uploads = relay.sent.map { String(decoding: $0, as: UTF8.self).lowercased() }.filter {
            $0.hasPrefix("post ")
        }
        #expect(uploads.count == 3)

        // The next launch settles every one: the queue is empty and each batch was sent once.
        let settle = try await Self.run(["upload", "settle"] + common)
        #expect(settle.status == 0)
        #expect(settle.stdout.contains("settle: 3 transfer results: applied 3 (delivered 3)"), "\(settle.stdout)")
        let status = try await Self.run(["upload", "status", "--json"] + common)
        #expect(status.stdout.contains(#""totalRecords":0"#), "\(status.stdout)")
        #expect(status.stdout.contains(#""batchesAttempted":3"#))
        #expect(status.stdout.contains(#""batchesSentOk":3"#))
        #expect(status.stdout.contains(#""batchesWithErrors":0"#))
        #expect(uploads.allSatisfy { !$0.contains("apsio-sent-at") && $0.contains("apsio-batch-id: ") })
        let stored = try Self.gatewayBatches(stack)
        #expect(stored.count == 3)
        #expect(stored.allSatisfy { $0.sentAt == nil && $0.duplicates == 0 })
        #expect(await stack.waitForDelivery(app: "shop", count: 3))
        relay.stop()
        await stack.stop()
    }

    @Test func theExampleAppDrivesClaimTransferSettleThroughThePublicProductAlone() async throws {
        let example = try #require(builtExecutable("uploader-transfer-example"), "build the example first")
        let stack = try await GatewayStack.start()
        let output = Pipe()
        let lines = ChildOutputLines(output.fileHandleForReading)
        let process = try launch(
            example, ["--endpoint", "http://127.0.0.1:\(stack.port)", "--data-dir", stack.root.path + "/example"],
            output: output, error: FileHandle.standardError)
        await waitForChildExit(process)
        await lines.waitForEnd()
        #expect(process.terminationStatus == 0, "\(lines.all)")
        // A standard batch and a crash batch: claimed, sent by curl without Apsio-Sent-At, settled.
        #expect(lines.all.filter { $0.hasPrefix("claimed ") }.count == 2, "\(lines.all)")
        #expect(lines.all.filter { $0.hasSuffix(": applied delivered") }.count == 2, "\(lines.all)")
        #expect(lines.all.last == "queue: 0 records, 2 batches sent ok")
        let stored = try Self.gatewayBatches(stack)
        #expect(stored.count == 2)
        #expect(stored.allSatisfy { $0.sentAt == nil && $0.duplicates == 0 })
        #expect(await stack.waitForDelivery(app: "transfer-example", count: 2))
        await stack.stop()
    }
}
