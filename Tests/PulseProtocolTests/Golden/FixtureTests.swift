import Foundation
import MsgTrans
import PulseProtocol
import Testing

/// Decodes every golden frame, its payload and model, and re-encodes both to the same bytes.
@Suite struct FixtureTests {
    @Test func manifestCoversEveryBizTypeAndTheRequiredCases() throws {
        let fixtures = FixtureStore.all
        #expect(Set(fixtures.map(\.name)).count == fixtures.count)
        for entry in PulseBizType.registry.entries {
            let ofType = fixtures.filter { $0.bizType == entry.name }
            #expect(ofType.contains { $0.packetType == "request" }, "\(entry.name) has a request frame")
            #expect(ofType.contains { $0.packetType == "response" }, "\(entry.name) has a response frame")
        }
        let eventBatches = fixtures.filter { $0.model == "EventBatch" }
        #expect(eventBatches.contains { $0.compression == "zstd" })
        #expect(eventBatches.contains { $0.compression == "zlib" })
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: FixtureStore.directory.path))
        let listed = Set(fixtures.flatMap { [$0.frameFile, $0.plaintextFile] }).union(["manifest.json"])
        #expect(files == listed, "every file is listed and every listed file exists")
    }

    @Test(arguments: FixtureStore.all)
    func frameAndPayloadRoundTrip(_ fixture: FrameFixture) throws {
        let bytes = try FixtureStore.frameBytes(fixture)
        let expectedPlaintext = try FixtureStore.plaintext(fixture)
        let entry = try #require(fixture.entry, "biz type \(fixture.bizType) is allocated")
        let model = try #require(PayloadModels.all[fixture.model], "model \(fixture.model) is known")

        var decoder = FrameDecoder()
        decoder.append(bytes)
        let frame = try #require(try decoder.next())
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 0)

        #expect(frame.bizType == entry.bizType.rawValue)
        #expect(frame.packetType == fixture.msgTransPacketType)
        #expect(frame.messageID == fixture.messageID)
        #expect(frame.compression == fixture.msgTransCompression)
        #expect(frame.extensionHeader.isEmpty)
        #expect(frame.flags == 0)
        if frame.compression != .none {
            #expect(expectedPlaintext.count >= PulseLimits.compressionMinBytes)
        }

        let plaintext = try frame.plaintext()
        #expect(plaintext == expectedPlaintext)
        #expect(try model.reencode(plaintext) == plaintext, "canonical payload re-encodes byte for byte")

        let rebuilt = try Frame.make(
            packetType: frame.packetType, bizType: entry.bizType.rawValue, messageID: frame.messageID,
            plaintext: try model.reencode(plaintext), preferred: frame.compression)
        #expect(rebuilt.encoded() == bytes, "frame re-encodes byte for byte")
    }

    @Test func ackFixtureIsTheContractExample() throws {
        let fixture = try #require(FixtureStore.all.first { $0.name == "event-batch-response" })
        let bytes = try FixtureStore.frameBytes(fixture)
        #expect(bytes.count == 16 + 33)
        #expect(Array(bytes[1...3]) == [0x00, 0x02, PulseBizType.clientEventBatchUpload.rawValue])
        #expect(Array(bytes[10...13]) == [0x00, 0x00, 0x00, 0x21])
        #expect(Array(bytes[16...]) == Array(#"{"code":0,"msg":null,"data":true}"#.utf8))
    }

    @Test func oneWayFixtureIsAnsweredWith400() throws {
        let fixture = try #require(FixtureStore.all.first { $0.name == "oneway-heartbeat" })
        var decoder = FrameDecoder()
        decoder.append(try FixtureStore.frameBytes(fixture))
        let frame = try #require(try decoder.next())
        let profile = PulsePeerProfile(role: .server, implemented: [.clientConnect, .clientHeartbeat])
        let decision = profile.decide(bizType: frame.bizType, oneWay: frame.packetType == .oneWay, phase: .connected)
        guard case .reject(let code, let message) = decision else {
            Issue.record("expected a rejection, got \(decision)")
            return
        }
        #expect(code == .badRequest)
        let answer = try #require(FixtureStore.all.first { $0.name == "oneway-heartbeat-response-400" })
        let answerBytes = try FixtureStore.plaintext(answer)
        #expect(answerBytes == PulseEnvelope<Bool>.failure(code, message).encodeJSON())
        #expect(answer.messageID == fixture.messageID)
    }
}
