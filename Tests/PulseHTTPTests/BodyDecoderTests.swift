import PulseHTTP
import PulseKit
import PulseTestSupport
import Testing

@Suite struct BodyDecoderTests {
    static let text = Array(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 500).utf8)

    @Test(arguments: [nil, "", "identity", "IDENTITY"])
    func identityPassesThrough(encoding: String?) throws {
        let decoded = try BodyDecoder.decode(Self.text, contentEncoding: encoding, maxOutputBytes: 1 << 20)
        #expect(decoded == Self.text)
    }

    @Test func identityStillEnforcesTheLimit() {
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(Self.text, contentEncoding: nil, maxOutputBytes: 100)
        }
        #expect(error?.code == .bodyTooLarge)
        #expect(error?.suggestedStatus == .contentTooLarge)
    }

    @Test(arguments: ["gzip", "GZip", "x-gzip", " gzip "])
    func gzipRoundTrip(encoding: String) throws {
        let compressed = Compression.deflate(Self.text, format: .gzip)
        #expect(compressed.count < Self.text.count)
        #expect(try BodyDecoder.decode(compressed, contentEncoding: encoding, maxOutputBytes: 1 << 20) == Self.text)
    }

    @Test func gzipWithSeveralMembersIsConcatenated() throws {
        let first = Array("first member, ".utf8)
        let second = Array("second member".utf8)
        let body = Compression.deflate(first, format: .gzip) + Compression.deflate(second, format: .gzip)
        #expect(try BodyDecoder.decode(body, contentEncoding: "gzip", maxOutputBytes: 1024) == first + second)
    }

    @Test func deflateAcceptsZlibAndRawStreams() throws {
        let zlib = Compression.deflate(Self.text, format: .zlib)
        let raw = Compression.deflate(Self.text, format: .raw)
        #expect(try BodyDecoder.decode(zlib, contentEncoding: "deflate", maxOutputBytes: 1 << 20) == Self.text)
        #expect(try BodyDecoder.decode(raw, contentEncoding: "deflate", maxOutputBytes: 1 << 20) == Self.text)
    }

    @Test func zstdRoundTripWithAndWithoutDeclaredSize() throws {
        let oneShot = Compression.zstd(Self.text)
        let streamed = Compression.zstdStreaming(Self.text)
        #expect(try BodyDecoder.decode(oneShot, contentEncoding: "zstd", maxOutputBytes: 1 << 20) == Self.text)
        #expect(try BodyDecoder.decode(streamed, contentEncoding: "ZSTD", maxOutputBytes: 1 << 20) == Self.text)
        #expect(
            try BodyDecoder.decode(oneShot + streamed, contentEncoding: "zstd", maxOutputBytes: 1 << 20)
                == Self.text + Self.text)
    }

    @Test func stackedCodingsAreUndoneInReverseOrder() throws {
        let body = Compression.zstd(Compression.deflate(Self.text, format: .gzip))
        #expect(try BodyDecoder.decode(body, contentEncoding: "gzip, zstd", maxOutputBytes: 1 << 20) == Self.text)
    }

    @Test func outputExactlyAtTheLimitIsAccepted() throws {
        let compressed = Compression.deflate(Self.text, format: .gzip)
        #expect(
            try BodyDecoder.decode(compressed, contentEncoding: "gzip", maxOutputBytes: Self.text.count).count
                == Self.text.count)
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(compressed, contentEncoding: "gzip", maxOutputBytes: Self.text.count - 1)
        }
        #expect(error?.code == .bodyTooLarge)
    }

    /// 64 MiB of zeros shrinks to a few KiB; decoding must stop at the 1 MiB limit, not inflate it all.
    @Test(arguments: ["gzip", "deflate", "zstd"])
    func compressionBombHitsTheLimit(encoding: String) {
        let zeros = [UInt8](repeating: 0, count: 64 << 20)
        let bomb: [UInt8]
        switch encoding {
        case "gzip": bomb = Compression.deflate(zeros, format: .gzip, level: 9)
        case "deflate": bomb = Compression.deflate(zeros, format: .zlib, level: 9)
        default: bomb = Compression.zstdStreaming(zeros, level: 3)
        }
        #expect(bomb.count < 200_000)
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(bomb, contentEncoding: encoding, maxOutputBytes: 1 << 20)
        }
        #expect(error?.code == .bodyTooLarge)
    }

    @Test(arguments: ["gzip", "deflate", "zstd"])
    func truncatedBodiesAreMalformed(encoding: String) {
        let full: [UInt8]
        switch encoding {
        case "gzip": full = Compression.deflate(Self.text, format: .gzip)
        case "deflate": full = Compression.deflate(Self.text, format: .zlib)
        default: full = Compression.zstd(Self.text)
        }
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(
                Array(full.prefix(full.count / 2)), contentEncoding: encoding, maxOutputBytes: 1 << 20)
        }
        #expect(error?.code == .malformedBody)
        #expect(error?.suggestedStatus == .badRequest)
    }

    @Test(arguments: ["gzip", "zstd"])
    func garbageIsMalformed(encoding: String) {
        let garbage = Array("this is not compressed at all".utf8)
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(garbage, contentEncoding: encoding, maxOutputBytes: 1 << 20)
        }
        #expect(error?.code == .malformedBody)
    }

    @Test func trailingBytesAfterTheStreamAreMalformed() {
        let body = Compression.deflate(Self.text, format: .gzip) + [0x00, 0x01, 0x02]
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(body, contentEncoding: "gzip", maxOutputBytes: 1 << 20)
        }
        #expect(error?.code == .malformedBody)
    }

    @Test func emptyCompressedBodiesAreMalformed() {
        for encoding in ["gzip", "zstd"] {
            let error = #expect(throws: HTTPServerError.self) {
                try BodyDecoder.decode([], contentEncoding: encoding, maxOutputBytes: 1024)
            }
            #expect(error?.code == .malformedBody)
        }
    }

    @Test(arguments: ["br", "compress", "gzip, br", "gzip;q=1"])
    func unknownEncodingsAreUnsupported(encoding: String) {
        let error = #expect(throws: HTTPServerError.self) {
            try BodyDecoder.decode(Self.text, contentEncoding: encoding, maxOutputBytes: 1 << 20)
        }
        #expect(error?.code == .unsupportedEncoding)
        #expect(error?.suggestedStatus == .unsupportedMediaType)
    }

    @Test func errorDescriptionsCarryNoPayload() {
        let secret = Array("secret-token-123".utf8)
        do {
            _ = try BodyDecoder.decode(secret, contentEncoding: "gzip", maxOutputBytes: 1024)
            Issue.record("garbage decoded")
        } catch {
            #expect(!error.description.contains("secret"))
        }
    }
}
