import Foundation
import PulseGateway
import PulseIngest
import PulseJSON
import PulseKit
import PulseProtocol
import PulseTestSupport
import Testing

@testable import PulseGateCLI
@testable import PulseUploader

/// The uploader's promises against the real gateway and ingest, and the `pulsegate upload` surface of them.
@Suite(.serialized) struct UploaderHardeningTests {
    /// An uploader on a fresh data directory, sending to `stack` as app `shop`.
    func uploader(_ stack: GatewayStack) async throws -> Uploader {
        var configuration = UploaderConfiguration(
            endpoint: "http://127.0.0.1:\(stack.port)", appId: "shop", dataDirectory: stack.root.path + "/uploader")
        configuration.appVersion = "2.0.0"
        return try await Uploader(configuration: configuration)
    }

    /// `count` bytes that do not compress.
    static func noise(_ count: Int) -> Data {
        var generator = SystemRandomNumberGenerator()
        return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    @Test func anAttachmentAtTheSharedLimitArrivesAtTheIngestAndOneByteMoreIsRefusedAtEnqueue() async throws {
        let stack = try await GatewayStack.start()
        let uploader = try await uploader(stack)
        let atLimit = stack.root.path + "/at-limit.bin"
        try Self.noise(PulseLimits.attachmentMaxBytes).write(to: URL(fileURLWithPath: atLimit))
        let receipt = try await uploader.record(.attachment(Attachment(path: atLimit, contentType: "image/png")))
        let report = try await uploader.flush()
        #expect(report.delivered == 1)
        #expect(report.partiallyRejectedRecords == 0)
        #expect(report.remainingBatches == 0)
        #expect(await stack.waitForDelivery(app: "shop", count: 1))
        let events = try await stack.ingest.events(app: "shop")
        let attachment = try #require(events.first { $0.name == "app.attachment" })
        #expect(attachment.eventId == receipt.recordId)
        #expect(try await GatewayHTTP.metric(port: stack.port, "pulsegate_oversized_events_total") == 0)

        let overLimit = stack.root.path + "/over-limit.bin"
        try Self.noise(PulseLimits.attachmentMaxBytes + 1).write(to: URL(fileURLWithPath: overLimit))
        let error = await #expect(throws: UploaderError.self) {
            try await uploader.record(.attachment(Attachment(path: overLimit)))
        }
        #expect(error?.code == .oversized)
        #expect(error?.message.contains("\(PulseLimits.attachmentMaxBytes)") == true)
        try await uploader.close()
        await stack.stop()
    }

    @Test func aRecordEncodedToExactlyTheEventLimitArrivesAndOneByteMoreIsRefused() async throws {
        let stack = try await GatewayStack.start()
        let uploader = try await uploader(stack)
        // Find the pad that makes the record's encoding exactly PulseLimits.eventMaxBytes.
        let encoder = RecordEncoder(clock: .system, random: .system, policy: UploadPolicy())
        func record(_ padLength: Int) -> TelemetryRecord {
            let pad = String(repeating: "p", count: padLength)
            return .event(EventEntry(name: "big", attributes: ["pad": .string(pad)], sessionId: "s1"))
        }
        let base = try encoder.encode(record(0)).fragment.count
        let exact = record(PulseLimits.eventMaxBytes - base)
        let receipt = try await uploader.record(exact)
        let report = try await uploader.flush()
        #expect(report.delivered == 1)
        #expect(report.partiallyRejectedRecords == 0)
        #expect(await stack.waitForDelivery(app: "shop", count: 1))
        #expect(try await stack.ingest.eventIDs(app: "shop").contains(receipt.recordId))
        let error = await #expect(throws: UploaderError.self) {
            try await uploader.record(record(PulseLimits.eventMaxBytes - base + 1))
        }
        #expect(error?.code == .oversized)
        try await uploader.close()
        await stack.stop()
    }

    @Test func flushExitsThreeWhileBatchesRemainAndZeroOnceTheQueueIsEmpty() async throws {
        let stack = try await GatewayStack.start()
        let queue = ["--data-dir", stack.root.path + "/cli-queue", "--app-id", "shop", "--no-background"]
        let file = stack.root.path + "/records.jsonl"
        try Data(#"{"type":"event","name":"one"}"#.utf8).write(to: URL(fileURLWithPath: file))
        #expect(await run(["upload", "enqueue", "--file", file] + queue).0 == 0)
        // Nothing listens on the endpoint: the batch stays, and flush says so with status 3.
        let help = await run(["upload", "--help"]).1.stdout
        #expect(help.contains("3 `flush` left batches undelivered"))
        let (down, downOutput) = await run(["upload", "flush", "--endpoint", "http://127.0.0.1:1"] + queue)
        #expect(down == 3)
        #expect(downOutput.stderr.contains("1 batches remain undelivered"))
        #expect(downOutput.stdout.contains("remaining 1 batches"))
        // Sent now, although the batch backs off after that failure.
        let (up, upOutput) = await run(["upload", "flush", "--endpoint", "http://127.0.0.1:\(stack.port)"] + queue)
        #expect(up == 0)
        #expect(upOutput.stdout.contains("delivered 1"))
        #expect(upOutput.stdout.contains("remaining 0 batches"))
        #expect(await stack.waitForDelivery(app: "shop", count: 1))
        await stack.stop()
    }

    @Test func enqueuePrintsTheCrashIdItGeneratedAndTheOneItWasGiven() async throws {
        let directory = try ScratchDirectory("crash-id")
        defer { directory.remove() }
        let file = directory.path + "/records.jsonl"
        try Data(
            """
            {"type":"crash","message":"SIGSEGV"}
            {"type":"crash","message":"SIGABRT","crashId":"crash-42"}
            {"type":"event","name":"after"}
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let (status, output) = await run([
            "upload", "enqueue", "--file", file, "--data-dir", directory.path + "/queue", "--app-id", "shop",
            "--no-background",
        ])
        #expect(status == 0)
        let acks = Dictionary(
            uniqueKeysWithValues: output.stdout.split(separator: "\n").map { line in
                let fields = line.split(separator: " ").map(String.init)
                return (fields[1], fields)
            })
        let generated = try #require(acks["1"])
        #expect(generated.count == 5)
        #expect(generated[3] == "crash")
        #expect(generated[4].count == 32)
        #expect(acks["2"] == ["ok", "2", acks["2"]?[2] ?? "", "crash", "crash-42"])
        #expect(acks["3"]?.count == 3)
    }

    @Test func aFlagBeatsTheGatewaysPolicyAndStatusShowsEveryValueWithItsSource() async throws {
        // The app is configured: a gateway answers /v1/policy only for apps it has seen upload or
        // that its configuration names.
        let stack = try await GatewayStack.start(policy: GatewayPolicy(allowedAppIDs: ["shop"]))
        let common = [
            "--data-dir", stack.root.path + "/cli-queue", "--app-id", "shop", "--no-background", "--endpoint",
            "http://127.0.0.1:\(stack.port)",
        ]
        let (fetched, fetchOutput) = await run(["upload", "policy", "--seal-interval-ms", "2000"] + common)
        #expect(fetched == 0, "\(fetchOutput.stderr)")
        #expect(fetchOutput.stdout.contains("policy: applied revision"))
        let (status, output) = await run(["upload", "status", "--json", "--seal-interval-ms", "2000"] + common)
        #expect(status == 0)
        let root = try JSONParser().parse(Array(output.stdout.utf8)).root
        let policy = try #require(root["policy"])
        #expect(policy["sealIntervalMilliseconds"]?["value"]?.string == "2000")
        #expect(policy["sealIntervalMilliseconds"]?["source"]?.string == "explicit")
        #expect(policy["maximumBatchRecords"]?["source"]?.string == "remote")
        #expect(policy["leaseMilliseconds"]?["source"]?.string == "default")
        // Without the flag, the gateway's value is in force.
        let (_, plain) = await run(["upload", "status", "--json"] + common)
        let plainPolicy = try #require(try JSONParser().parse(Array(plain.stdout.utf8)).root["policy"])
        #expect(plainPolicy["sealIntervalMilliseconds"]?["source"]?.string == "remote")
        // The text form lists them too.
        let (_, text) = await run(["upload", "status", "--seal-interval-ms", "2000"] + common)
        #expect(text.stdout.contains("sealIntervalMilliseconds"))
        #expect(text.stdout.contains("2000 (explicit)"))
        await stack.stop()
    }
}
