import PulseCompression
import PulseKit
import Testing

@testable import MsgTrans

@Suite("Compression")
struct CompressionTests {
    static let sizes = [0, 1, 100, 1023, 1024, 70_000, 300_000]

    private func sample(_ count: Int) -> [UInt8] {
        // Half compressible JSON, half pseudo-random letters.
        let json = Payloads.eventBatch(eventCount: 8, padding: 0)
        let filler = Payloads.filler(count: count, seed: UInt64(count))
        return (0..<count).map { $0 % 2 == 0 ? json[$0 % json.count] : filler[$0] }
    }

    @Test(arguments: sizes)
    func zstdRoundTrip(size: Int) throws {
        let plaintext = sample(size)
        let compressed = try PayloadCompressor.compress(plaintext, with: .zstd)
        #expect(compressed.starts(with: [0x28, 0xB5, 0x2F, 0xFD]))
        #expect(try PayloadCompressor.decompress(compressed, with: .zstd, maxOutputBytes: size) == plaintext)
    }

    @Test(arguments: sizes)
    func zlibRoundTrip(size: Int) throws {
        let plaintext = sample(size)
        let compressed = try PayloadCompressor.compress(plaintext, with: .zlib)
        #expect(compressed.starts(with: [0x78, 0x9C]), "RFC 1950 at the default level")
        #expect(try PayloadCompressor.decompress(compressed, with: .zlib, maxOutputBytes: size) == plaintext)
    }

    @Test func zstdCompressionReusesABoundedPoolOfContexts() async throws {
        let input = sample(70_000)
        let reference = try PayloadCompressor.compress(input, with: .zstd, level: 1)
        let before = CompressionContextPool.shared.statistics.zstdCompressionContextsCreated
        for _ in 0..<40 {
            let same = try PayloadCompressor.compress(input, with: .zstd, level: 1) == reference
            #expect(same)
        }
        // Sequential calls reuse one context (other suites may compress concurrently: at most the
        // pool's capacity more).
        #expect(
            CompressionContextPool.shared.statistics.zstdCompressionContextsCreated - before
                <= CompressionContextPool.maximumIdle)
        // A reused context carries nothing over from one call to the next.
        let level3 = try PayloadCompressor.compress(input, with: .zstd, level: 3)
        #expect(try PayloadCompressor.decompress(level3, with: .zstd, maxOutputBytes: input.count) == input)
        #expect(try PayloadCompressor.compress(input, with: .zstd, level: 1) == reference)
        // Many concurrent callers: every output is right, and the idle pool stays bounded.
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<32 {
                group.addTask { try PayloadCompressor.compress(input, with: .zstd, level: 1) == reference }
            }
            for try await same in group { #expect(same) }
        }
    }

    @Test func noneIsIdentity() throws {
        let bytes = sample(50)
        #expect(try PayloadCompressor.compress(bytes, with: .none) == bytes)
        #expect(try PayloadCompressor.decompress(bytes, with: .none, maxOutputBytes: 0) == bytes)
    }

    @Test func levelsChangeTheOutputButNotThePlaintext() throws {
        let plaintext = Payloads.eventBatch(eventCount: 64, padding: 0)
        let fast = try PayloadCompressor.compress(plaintext, with: .zstd, level: 1)
        let strong = try PayloadCompressor.compress(plaintext, with: .zstd, level: 19)
        let standard = try PayloadCompressor.compress(plaintext, with: .zstd)
        #expect(standard == (try PayloadCompressor.compress(plaintext, with: .zstd, level: 3)))
        #expect(strong.count < fast.count)
        for stream in [fast, strong] {
            #expect(try PayloadCompressor.decompress(stream, with: .zstd, maxOutputBytes: 1 << 20) == plaintext)
        }
        let zlibBest = try PayloadCompressor.compress(plaintext, with: .zlib, level: 9)
        #expect(zlibBest.starts(with: [0x78, 0xDA]))
        #expect(try PayloadCompressor.decompress(zlibBest, with: .zlib, maxOutputBytes: 1 << 20) == plaintext)
    }

    @Test func makeLeavesSmallPayloadsUncompressed() throws {
        for size in [0, 1, 1023] {
            let frame = try Frame.make(
                packetType: .request, bizType: 5, messageID: 1, plaintext: sample(size), preferred: .zstd)
            #expect(frame.compression == .none, "\(size) bytes")
            #expect(frame.payload == sample(size))
        }
    }

    @Test(arguments: [Compression.zstd, .zlib])
    func makeCompressesFromTheMinimumSize(codec: Compression) throws {
        for size in [1024, 5000] {
            let plaintext = sample(size)
            let frame = try Frame.make(
                packetType: .request, bizType: 5, messageID: 2, plaintext: plaintext, preferred: codec)
            #expect(frame.compression == codec)
            #expect(frame.payload != plaintext)
            #expect(try frame.plaintext() == plaintext)
            #expect(frame.flags == 0 && frame.extensionHeader.isEmpty)
        }
    }

    @Test func makeHonoursThePolicy() throws {
        let plaintext = sample(100)
        let eager = CompressionPolicy(compressionMinBytes: 10, zstdLevel: 19)
        let frame = try Frame.make(
            packetType: .oneWay, bizType: 1, messageID: 3, plaintext: plaintext, preferred: .zstd, policy: eager)
        #expect(frame.compression == .zstd)
        #expect(frame.payload == (try PayloadCompressor.compress(plaintext, with: .zstd, level: 19)))
        let none = try Frame.make(
            packetType: .oneWay, bizType: 1, messageID: 3, plaintext: plaintext, preferred: .none, policy: eager)
        #expect(none.compression == .none)
        #expect(none.payload == plaintext)
        #expect(CompressionPolicy().compressionMinBytes == 1024)
        #expect(CompressionPolicy().zstdLevel == 3)
    }

    @Test func incompressiblePayloadsStillUseTheChosenCodec() throws {
        var random = Payloads.Generator(state: 7)
        let noise = (0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let frame = try Frame.make(packetType: .request, bizType: 5, messageID: 4, plaintext: noise, preferred: .zlib)
        #expect(frame.compression == .zlib)
        #expect(frame.payload.count > noise.count)
        #expect(try frame.plaintext() == noise)
    }

    @Test(arguments: [Compression.zstd, .zlib])
    func outputLimitIsExact(codec: Compression) throws {
        let plaintext = sample(10_000)
        let stream = try PayloadCompressor.compress(plaintext, with: codec)
        #expect(try PayloadCompressor.decompress(stream, with: codec, maxOutputBytes: 10_000) == plaintext)
        let error = #expect(throws: MsgTransError.self) {
            try PayloadCompressor.decompress(stream, with: codec, maxOutputBytes: 9_999)
        }
        #expect(error?.code == .decompressedTooLarge)
        let empty = try PayloadCompressor.compress([], with: codec)
        #expect(try PayloadCompressor.decompress(empty, with: codec, maxOutputBytes: 0) == [])
        let zero = #expect(throws: MsgTransError.self) {
            try PayloadCompressor.decompress(stream, with: codec, maxOutputBytes: 0)
        }
        #expect(zero?.code == .decompressedTooLarge)
    }

    @Test(arguments: [Compression.zstd, .zlib])
    func everyTruncationIsAnError(codec: Compression) throws {
        let stream = try PayloadCompressor.compress(sample(3000), with: codec)
        for cut in 0..<stream.count {
            let error = #expect(throws: MsgTransError.self) {
                try PayloadCompressor.decompress(Array(stream.prefix(cut)), with: codec, maxOutputBytes: 1 << 20)
            }
            #expect(error?.code == .truncatedStream, "cut at \(cut) of \(stream.count)")
        }
    }

    @Test(arguments: [Compression.zstd, .zlib])
    func everyTrailingByteIsAnError(codec: Compression) throws {
        let stream = try PayloadCompressor.compress(sample(3000), with: codec)
        for extra in [[UInt8(0)], [0xFF], Array(stream.prefix(4))] {
            let error = #expect(throws: MsgTransError.self) {
                try PayloadCompressor.decompress(stream + extra, with: codec, maxOutputBytes: 1 << 20)
            }
            #expect(error?.code == .trailingBytes)
        }
    }

    @Test func zstdWindowCapFollowsTheOutputLimit() {
        #expect(PayloadCompressor.zstdWindowLogMax(forMaxOutputBytes: 0) == 21)
        #expect(PayloadCompressor.zstdWindowLogMax(forMaxOutputBytes: 4096) == 21)
        #expect(PayloadCompressor.zstdWindowLogMax(forMaxOutputBytes: 16 << 20) == 24)
        #expect(PayloadCompressor.zstdWindowLogMax(forMaxOutputBytes: (16 << 20) + 1) == 25)
        #expect(PayloadCompressor.zstdWindowLogMax(forMaxOutputBytes: .max) == 27)
    }

    @Test func zstdFrameDeclaringAWindowBeyondTheCapIsRejected() throws {
        // Level 19 on 3 MiB declares an 8 MiB window (log 23); a 1 MiB limit caps the window at 2 MiB.
        let plaintext = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let stream = try PayloadCompressor.compress(plaintext, with: .zstd, level: 19)
        let error = #expect(throws: MsgTransError.self) {
            try PayloadCompressor.decompress(stream, with: .zstd, maxOutputBytes: 1 << 20)
        }
        #expect(error.map { [.decompressionFailed, .decompressedTooLarge].contains($0.code) } == true)
        #expect(try PayloadCompressor.decompress(stream, with: .zstd, maxOutputBytes: 3 << 20) == plaintext)
    }
}
