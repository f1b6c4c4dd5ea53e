import Foundation
import MsgTrans
import PulseIngest
import PulseTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `kill -9` of a `pulsegate ingest` process with pipelined batches in flight on one connection
/// (so group commits are shared and some are between their COMMIT and their answer): every batch
/// that was answered `{"code":0,"data":true}` is in the database afterwards, with all its events,
/// and nothing is stored twice.
@Suite(.serialized) struct IngestCrashTests {
    static let app = "crash_app"
    static let ack = Array(#"{"code":0,"msg":null,"data":true}"#.utf8)

    @Test func killMinus9WithPipelinedBatchesLosesNoAcknowledgedBatch() async throws {
        try await withPulsegate("ingestkill") { executable, root in
            let dataDirectory = root.path + "/ingest"
            let port = try unusedLoopbackPort()
            let output = Pipe()
            let child = try launch(
                executable, ["ingest", "--listen", "127.0.0.1:\(port)", "--data-dir", dataDirectory], output: output,
                error: FileHandle.nullDevice)
            defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
            let lines = ChildOutputLines(output.fileHandleForReading)
            let started = await eventually(within: .seconds(60)) { lines.all.contains { $0.contains("listening on") } }
            try #require(started, "pulsegate ingest did not start: \(lines.all)")

            let client = try #require(BlockingFrameClient(port: port))
            client.send(Frame(packetType: .request, bizType: 1, messageID: 1, payload: Self.connect).encoded())
            let connected = try #require(client.next())
            #expect(String(decoding: connected.payload, as: UTF8.self).hasPrefix(#"{"code":0"#))

            // 400 batches of 20 events, up to 32 in flight; the process is killed once 40 are answered.
            let batches = 400
            let acknowledged = Mutex<Set<Int>>([])
            let readerDone = Gate()
            let reader = Thread {
                defer { readerDone.open() }
                while let frame = client.next() {
                    let batch = Int(frame.messageID) - 100
                    guard (0..<batches).contains(batch), (try? frame.plaintext()) == Self.ack else { continue }
                    _ = acknowledged.withLock { $0.insert(batch) }
                    client.answered.add(1, ordering: .relaxed)
                }
            }
            reader.start()
            var sent = 0
            while sent < batches {
                let inFlightAfter = sent
                _ = await eventually {
                    inFlightAfter - client.answered.load(ordering: .relaxed) < 32 || !child.isRunning
                }
                let frame = try Frame.make(
                    packetType: .request, bizType: 5, messageID: UInt32(100 + sent), plaintext: Self.batch(sent),
                    preferred: .zstd, policy: CompressionPolicy(compressionMinBytes: 0))
                guard client.send(frame.encoded()) else { break }
                sent += 1
                if client.answered.load(ordering: .relaxed) >= 40 && child.isRunning {
                    kill(child.processIdentifier, SIGKILL)
                }
            }
            if child.isRunning { kill(child.processIdentifier, SIGKILL) }
            await waitForChildExit(child)
            #expect(child.terminationReason == .uncaughtSignal)
            client.close()
            await readerDone.wait()
            let answered = acknowledged.withLock { $0 }
            #expect(answered.count >= 40)
            #expect(sent > answered.count, "batches were still in flight when the process died")

            // The database, opened again by a new server on the same directory (the lock died with the
            // process).
            var configuration = IngestConfiguration(dataDirectory: dataDirectory, policy: .acceptingEveryApp)
            configuration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
            let server = try await IngestServer.start(configuration)
            let events = try await server.events(app: Self.app, limit: 100_000)
            await server.shutdown()
            var eventsPerBatch: [String: Int] = [:]
            for event in events { eventsPerBatch[event.batchId, default: 0] += 1 }
            let missing = answered.filter { eventsPerBatch["b-\($0)"] != 20 }
            #expect(missing.isEmpty, "acknowledged but not (fully) stored: \(missing.sorted())")
            #expect(Set(events.map(\.eventId)).count == events.count)
            // Batches are stored whole or not at all.
            #expect(eventsPerBatch.values.allSatisfy { $0 == 20 })
        }
    }

    static let connect = Array(
        """
        {"protocolVersion":2,"appId":"\(app)","deviceId":"dev-k","installationId":"inst-k","platform":"ios",\
        "deviceType":"phone","packageName":"com.example.crash","appVersion":"1.0","buildNumber":1,\
        "sdkVersion":"2.3.0","capabilities":["batch_upload","compression:zstd"]}
        """.utf8)

    static func batch(_ index: Int) -> [UInt8] {
        let events = (0..<20).map { event in
            let id = String(format: "%016x%016x", UInt64(index), UInt64(event) &* 0x9E37_79B9_7F4A_7C15)
            return """
                {"id":"\(id)","timestamp":\(1_764_400_000_000 + index),"sessionId":"s","kind":"Analytics",\
                "name":"tap","source":{"module":null,"imageUuid":null},"attributes":{"i":\(event)}}
                """
        }
        return Array(
            """
            {"identity":{"projectId":"\(app)","installationId":"inst-k","deviceId":"dev-k","userId":null,\
            "appVersion":"1.0","buildNumber":1,"sdkVersion":"2.3.0","platform":"ios",\
            "packageName":"com.example.crash"},"events":[\(events.joined(separator: ","))],"batchId":"b-\(index)"}
            """.utf8)
    }
}

/// A blocking msgtrans client on a loopback socket: one thread sends, another reads frames.
final class BlockingFrameClient: @unchecked Sendable {
    let answered = Atomic<Int>(0)
    private let connection: RawHTTPConnection
    private var decoder = FrameDecoder()

    init?(port: Int) {
        guard let connection = try? RawHTTPConnection(port: port, receiveTimeoutSeconds: 30) else { return nil }
        self.connection = connection
    }

    /// Writes all of `bytes`; false once the peer is gone.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        (try? connection.send(bytes)) != nil
    }

    /// The next frame; `nil` on EOF, reset or timeout. Called from one thread only.
    func next() -> Frame? {
        while true {
            if let frame = try? decoder.next() { return frame }
            guard let bytes = try? connection.receiveAvailable(), !bytes.isEmpty else { return nil }
            decoder.append(bytes)
        }
    }

    func close() {
        connection.close()
    }
}
