import MsgTrans
import PulseKit
import Testing

@Suite("FrameDecoder")
struct FrameDecoderTests {
    /// Every complete frame among the fixtures that decode under the default limits.
    private func defaultLimitFrames() throws -> [(bytes: [UInt8], frame: Frame)] {
        try Fixtures.all.filter { $0.expect == .frame && $0.limits == nil }.map { fixture in
            let bytes = try Fixtures.bytes(of: fixture)
            var decoder = FrameDecoder()
            decoder.append(bytes)
            return (bytes, try #require(try decoder.next()))
        }
    }

    @Test func manyFramesInOneBuffer() throws {
        let frames = try defaultLimitFrames()
        #expect(frames.count >= 15)
        var decoder = FrameDecoder()
        decoder.append(frames.flatMap(\.bytes))
        var decoded: [Frame] = []
        while let frame = try decoder.next() {
            decoded.append(frame)
        }
        #expect(decoded == frames.map(\.frame))
        #expect(decoder.bufferedByteCount == 0)
        try decoder.finish()
    }

    @Test func dripFedOneByteAtATime() throws {
        let frames = try defaultLimitFrames().filter { $0.bytes.count < 20_000 }
        let stream = frames.flatMap(\.bytes)
        var decoder = FrameDecoder()
        var decoded: [Frame] = []
        for byte in stream {
            decoder.append([byte])
            while let frame = try decoder.next() {
                decoded.append(frame)
            }
        }
        #expect(decoded == frames.map(\.frame))
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func arbitraryChunkingGivesTheSameFrames() throws {
        let frames = try defaultLimitFrames()
        let stream = frames.flatMap(\.bytes)
        for seed in UInt64(1)...8 {
            var random = Payloads.Generator(state: seed)
            var decoder = FrameDecoder()
            var decoded: [Frame] = []
            var offset = 0
            while offset < stream.count {
                let size = min(stream.count - offset, 1 + random.below(seed.isMultiple(of: 2) ? 64 : 9000))
                stream[offset..<offset + size].withUnsafeBytes { decoder.append($0) }
                offset += size
                while let frame = try decoder.next() {
                    decoded.append(frame)
                }
            }
            #expect(decoded == frames.map(\.frame), "seed \(seed)")
        }
    }

    @Test func partialFrameConsumesNothing() throws {
        let bytes = try Fixtures.bytes("example-2-connect-request")
        var decoder = FrameDecoder()
        for cut in [1, 15, 16, 17, 200, bytes.count - 1] {
            decoder = FrameDecoder()
            decoder.append(Array(bytes.prefix(cut)))
            #expect(try decoder.next() == nil)
            #expect(try decoder.next() == nil)
            #expect(decoder.bufferedByteCount == cut)
            decoder.append(Array(bytes.dropFirst(cut)))
            let frame = try #require(try decoder.next())
            #expect(frame.encoded() == bytes)
            #expect(decoder.bufferedByteCount == 0)
        }
    }

    @Test func frameFollowedByPartialFrame() throws {
        let first = try Fixtures.bytes("example-1-request-hi")
        let second = try Fixtures.bytes("example-5-ack")
        var decoder = FrameDecoder()
        decoder.append(first + second.prefix(20))
        #expect(try decoder.next()?.messageID == 0x0102_0304)
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 20)
        decoder.append(Array(second.dropFirst(20)))
        #expect(try decoder.next()?.messageID == 4)
        #expect(decoder.bufferedByteCount == 0)
    }

    @Test func headerErrorNeedsNoBodyEvenWhenTheBodyIsHuge() throws {
        // payload_len 64 MiB + 1: the decoder rejects it with 16 bytes buffered.
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("payload-len-over-default-limit"))
        #expect(decoder.bufferedByteCount == 16)
        let error = #expect(throws: MsgTransError.self) { try decoder.next() }
        #expect(error?.code == .payloadTooLarge)
    }

    @Test func badHeaderAfterGoodFramesIsReportedAfterThem() throws {
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("example-1-request-hi") + Fixtures.bytes("unknown-packet-type-3"))
        #expect(try decoder.next()?.bizType == 100)
        let error = #expect(throws: MsgTransError.self) { try decoder.next() }
        #expect(error?.code == .unknownPacketType)
    }

    @Test func longStreamWithInterleavedReadsStaysCorrect() throws {
        // Thousands of small frames, appended in chunks that straddle frame boundaries, exercise
        // the read index and compaction.
        var stream: [UInt8] = []
        var expected: [Frame] = []
        for index in 0..<5000 {
            let frame = Frame(
                packetType: .request, bizType: UInt8(index % 8), messageID: UInt32(index + 1),
                payload: Payloads.filler(count: index % 300, seed: UInt64(index)))
            frame.encode(into: &stream)
            expected.append(frame)
        }
        var decoder = FrameDecoder()
        var decoded: [Frame] = []
        var offset = 0
        var random = Payloads.Generator(state: 42)
        while offset < stream.count {
            let size = min(stream.count - offset, 1 + random.below(1500))
            decoder.append(Array(stream[offset..<offset + size]))
            offset += size
            while let frame = try decoder.next() {
                decoded.append(frame)
            }
            #expect(decoder.bufferedByteCount < FrameHeader.size + 300 + 1500)
        }
        #expect(decoded == expected)
    }

    @Test func limitsAreExposed() {
        let limits = FrameLimits(maxPayloadBytes: 10, maxExtensionHeaderBytes: 0, maxDecompressedBytes: 20)
        #expect(FrameDecoder(limits: limits).limits == limits)
        #expect(FrameDecoder().limits == FrameLimits())
        #expect(FrameLimits().maxPayloadBytes == 64 << 20)
        #expect(FrameLimits().maxExtensionHeaderBytes == 4096)
        #expect(FrameLimits().maxDecompressedBytes == 16 << 20)
    }

    @Test func zeroExtensionLimitRejectsAnyExtensionHeader() throws {
        var decoder = FrameDecoder(limits: FrameLimits(maxExtensionHeaderBytes: 0))
        decoder.append(try Fixtures.bytes("extension-header"))
        let error = #expect(throws: MsgTransError.self) { try decoder.next() }
        #expect(error?.code == .extensionHeaderTooLarge)
    }
}
