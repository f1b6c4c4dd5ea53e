import Foundation
import PulseJSON
import PulseTestSupport
import Synchronization
import Testing

@testable import PulseUploader

/// Tests that run the real `pulsegate` executable as a child process and kill it with SIGKILL.
@Suite(.serialized) struct ProcessTests {
    init() {
        // Writing to a child that was killed must fail with EPIPE, not kill the test runner.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Lines `ok <line> <record-id>` read from a child's standard output on a thread of our own.
    struct AckReader: Sendable {
        let lines: ChildOutputLines

        init(_ handle: FileHandle) { lines = ChildOutputLines(handle) }

        var ids: [String] {
            lines.all.compactMap { line in
                let parts = line.split(separator: " ")
                return parts.count == 3 && parts[0] == "ok" ? String(parts[2]) : nil
            }
        }
        var count: Int { ids.count }

        func waitForEnd() async { await lines.waitForEnd() }
    }

    @Test func killMinus9DuringEnqueueLosesNoAcknowledgedRecord() async throws {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let directory = try TemporaryDirectory()
        let input = Pipe()
        let output = Pipe()
        let process = try launch(
            executable,
            [
                "upload", "enqueue", "--data-dir", directory.path, "--app-id", "kill-test", "--no-background",
                "--endpoint", "http://127.0.0.1:9",
            ],
            input: input, output: output, error: FileHandle.nullDevice)
        let acks = AckReader(output.fileHandleForReading)

        // Feed records until the child dies: events, logs, spans, crashes and exits mixed, so batches are
        // sealed by size and crash reports are sealed at once while the stream runs.
        let writer = Thread {
            let descriptor = input.fileHandleForWriting.fileDescriptor
            for index in 0..<200_000 {
                let line: String
                switch index % 50 {
                case 7: line = #"{"type":"crash","crashId":"crash-\#(index)","message":"boom \#(index)"}"#
                case 13: line = #"{"type":"exit","reason":"user","code":\#(index)}"#
                case 21: line = #"{"type":"span","name":"op-\#(index)","start":1700000000000,"end":1700000000100}"#
                default:
                    line =
                        #"{"type":"event","name":"tick","attributes":{"n":\#(index),"pad":"\#(String(repeating: "p", count: index % 300))"}}"#
                }
                let bytes = Array((line + "\n").utf8)
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written < 0 { break }
            }
            try? input.fileHandleForWriting.close()
        }
        writer.start()

        _ = await eventually(within: .seconds(60)) { acks.count >= 1_500 || !process.isRunning }
        kill(process.processIdentifier, SIGKILL)
        await waitForChildExit(process)
        await acks.waitForEnd()
        #expect(process.terminationReason == .uncaughtSignal)
        let acknowledged = acks.ids
        #expect(acknowledged.count >= 1_500)

        var configuration = UploaderConfiguration(
            endpoint: "http://127.0.0.1:9", appId: "kill-test", dataDirectory: directory.path)
        configuration.transport = CurlTransport(options: CurlTransport.Options(connections: 1))
        let uploader = try await Uploader(configuration: configuration)
        let queued = try await uploader.queuedRecordIds()
        let missing = Set(acknowledged).subtracting(queued)
        #expect(missing.isEmpty, "acknowledged records missing after kill -9: \(missing.count)")
        #expect(try await uploader.storedBatches().contains { $0.recordClass == .crash })
        try await uploader.close()
    }

    @Test func killMinus9DuringUploadRetriesTheSameBatchIdAndBytes() async throws {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let server = try FaultServer(script: [.hang])
        let realNow = UploaderClock.system.nowMilliseconds()
        var fixture = try UploaderFixture(clock: ManualClock(realNow))
        fixture.endpoint = server.baseURL
        let before = try await fixture.open()
        for index in 0..<50 {
            try await before.record(.event(EventEntry(name: "e", attributes: ["n": .int(Int64(index))])))
        }
        try await before.seal(.flush)
        let stored = try #require(try await before.storedBatches().first)
        try await before.close()

        let process = try launch(
            executable,
            [
                "upload", "drain", "--data-dir", fixture.directory.path, "--app-id", "test-app", "--endpoint",
                server.baseURL, "--no-background",
            ],
            output: FileHandle.nullDevice, error: FileHandle.nullDevice)
        #expect(await server.waitForRequests(1, seconds: 30))
        kill(process.processIdentifier, SIGKILL)
        await waitForChildExit(process)
        #expect(process.terminationReason == .uncaughtSignal)

        // The killed sender's lease still protects the batch for a while…
        let after = try await fixture.open()
        #expect(try await after.storedBatches().first?.attempts == 1)
        #expect(try await after.sendDue().attempted == 0)
        // …then it is sent again: same id, same bytes.
        fixture.clock.set(UploaderClock.system.nowMilliseconds() + UploadPolicy().leaseMilliseconds + 1)
        let report = try await after.sendDue()
        #expect(report.delivered == 1)
        let requests = server.requests
        #expect(requests.count == 2)
        #expect(requests.map { $0.headers["apsio-batch-id"] } == [stored.batchId, stored.batchId])
        #expect(requests.map { sha256Hex($0.body) } == [sha256Hex(stored.body), sha256Hex(stored.body)])
        #expect(requests.allSatisfy { $0.headers["apsio-sent-at"] != nil })
        // The sequence number is part of the sealed batch, and the counters survived the kill: the killed
        // drain's attempt was counted when it claimed the batch; its outcome was never learned.
        #expect(requests.map { $0.headers["apsio-batch-sequence"] } == ["1", "1"])
        let diagnostics = try await after.status().diagnostics
        #expect(diagnostics.batchesAttempted == 2)
        #expect(diagnostics.batchesSentSuccessfully == 1)
        #expect(diagnostics.batchesWithErrors == 0)
        try await after.record(.event(EventEntry(name: "later")))
        try await after.seal(.flush)
        #expect(try await after.storedBatches().map(\.sequence) == [2])
        try await after.close()
        server.stop()
    }

    @Test func theDetachedDrainRunsInItsOwnSession() async throws {
        let directory = try TemporaryDirectory()
        let transfer = DetachedDrainTransfer(
            executablePath: "/bin/sh",
            arguments: [
                "-c",
                "cat /proc/self/stat > '\(directory.path)/stat.tmp'; mv '\(directory.path)/stat.tmp' '\(directory.path)/stat'; echo drained",
            ],
            logPath: directory.path + "/drain.log")
        let pid = try transfer.spawn()
        let statPath = directory.path + "/stat"
        _ = await eventually(within: .seconds(10)) { FileManager.default.fileExists(atPath: statPath) }
        let stat = try String(contentsOfFile: statPath, encoding: .utf8)
        // Fields after the command name: state, ppid, pgrp, session.
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        #expect(Int32(fields[2]) == pid)
        #expect(Int32(fields[3]) == pid)
        #expect(getsid(0) != pid)
        _ = await eventually(within: .seconds(10)) {
            (try? String(contentsOfFile: directory.path + "/drain.log", encoding: .utf8))?.contains("drained") == true
        }
        #expect(try String(contentsOfFile: directory.path + "/drain.log", encoding: .utf8) == "drained\n")
    }

    @Test func backgroundHandsTheQueueToADetachedDrainThatSends() async throws {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let server = try FaultServer()
        let directory = try TemporaryDirectory()
        let common = ["--data-dir", directory.path, "--app-id", "bg-app", "--endpoint", server.baseURL]

        let input = Pipe()
        let enqueue = try launch(
            executable, ["upload", "enqueue", "--no-background"] + common, input: input,
            output: FileHandle.nullDevice, error: FileHandle.nullDevice)
        input.fileHandleForWriting.write(
            Data(
                """
                {"type":"event","name":"one"}
                {"type":"log","body":"two"}
                {"type":"metric","name":"three","value":3}

                """.utf8))
        try input.fileHandleForWriting.close()
        await waitForChildExit(enqueue)
        #expect(enqueue.terminationStatus == 0)

        let output = Pipe()
        let background = try launch(
            executable, ["upload", "background"] + common, output: output, error: FileHandle.nullDevice)
        await waitForChildExit(background)
        #expect(background.terminationStatus == 0)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(text.contains("handed 2 batches to a background drain"))

        // The background command has exited; the detached drain sends on its own.
        #expect(await server.waitForRequests(2, seconds: 30))
        let paths = Set(server.requests.map(\.path))
        #expect(paths == ["/v1/logs", "/v1/metrics"])
        #expect(
            server.requests.allSatisfy { $0.headers["apsio-sent-at"] != nil && $0.headers["apsio-app-id"] == "bg-app" })
        server.stop()
    }

    @Test func enqueueRunsBesideARunningSenderAndItsRecordsAreSent() async throws {
        let executable = try #require(builtPulsegateExecutable(), "build the pulsegate executable first")
        let server = try FaultServer()
        let directory = try TemporaryDirectory()
        let common = [
            "--data-dir", directory.path, "--app-id", "beside-app", "--endpoint", server.baseURL, "--no-background",
            "--seal-interval-ms", "100",
        ]
        // The sender: `upload run`, until SIGTERM.
        let senderErrors = Pipe()
        let senderLines = ChildOutputLines(senderErrors.fileHandleForReading)
        let sender = try launch(
            executable, ["upload", "run"] + common, output: FileHandle.nullDevice, error: senderErrors)
        defer { if sender.isRunning { kill(sender.processIdentifier, SIGKILL) } }
        _ = await eventually { senderLines.all.contains { $0.contains("uploading from") } }
        #expect(senderLines.all.contains { $0.contains("uploading from") })

        // Two enqueues beside it, one after the other: neither is locked out.
        for round in 0..<2 {
            let input = Pipe()
            let output = Pipe()
            let acks = AckReader(output.fileHandleForReading)
            let enqueue = try launch(
                executable, ["upload", "enqueue"] + common, input: input, output: output,
                error: FileHandle.nullDevice)
            input.fileHandleForWriting.write(
                Data((0..<20).map { #"{"type":"event","name":"r\#(round)-\#($0)"}"# + "\n" }.joined().utf8))
            try input.fileHandleForWriting.close()
            await waitForChildExit(enqueue)
            await acks.waitForEnd()
            #expect(enqueue.terminationStatus == 0)
            #expect(acks.count == 20)
        }
        // The running sender seals and sends what the enqueues queued.
        @Sendable func sentEvents() -> Int {
            server.requests.reduce(0) { total, request in
                let document = try? parseBody(request.body, encoding: .gzip)
                let records =
                    document?.root["resourceLogs"]?[0]?["scopeLogs"]?[0]?["logRecords"].map { Array($0.elements) }
                    ?? []
                return total + records.filter { $0["eventName"]?.string?.hasPrefix("r") == true }.count
            }
        }
        _ = await eventually { sentEvents() >= 40 }
        #expect(sentEvents() == 40)
        kill(sender.processIdentifier, SIGTERM)
        await waitForChildExit(sender)
        #expect(sender.terminationStatus == 0)
        server.stop()
    }
}
