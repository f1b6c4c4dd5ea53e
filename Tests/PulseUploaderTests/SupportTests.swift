import OTLPProtobuf
import PulseHashing
import PulseKit
import Testing

@testable import PulseUploader

@Suite struct SupportTests {
    @Test func sha256MatchesFIPSVectors() {
        #expect(sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(sha256Hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            sha256Hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            sha256Hex([UInt8](repeating: 0x61, count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(arguments: BodyEncoding.allCases) func compressionRoundTripsAndUsesTheStandardFraming(encoding: BodyEncoding)
        throws
    {
        let input = Array(String(repeating: "{\"key\":\"value\"},", count: 2_000).utf8)
        let compressed = try BodyCompression.compress(input, encoding: encoding)
        #expect(compressed.count < input.count / 10)
        switch encoding {
        case .gzip: #expect(Array(compressed.prefix(2)) == [0x1F, 0x8B])
        case .zstd: #expect(Array(compressed.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
        }
        #expect(try BodyCompression.decompress(compressed, encoding: encoding) == input)
        // Compression is deterministic: sealing once is what makes retries byte-identical, but the same input
        // compresses the same way anyway.
        #expect(try BodyCompression.compress(input, encoding: encoding) == compressed)
    }

    @Test(arguments: BodyEncoding.allCases) func decompressionRejectsTruncationAndTrailingBytes(encoding: BodyEncoding)
        throws
    {
        let compressed = try BodyCompression.compress(Array(repeating: 7, count: 10_000), encoding: encoding)
        #expect(throws: UploaderError.self) {
            try BodyCompression.decompress(Array(compressed.dropLast(3)), encoding: encoding)
        }
        #expect(throws: UploaderError.self) {
            try BodyCompression.decompress(compressed + [1, 2, 3], encoding: encoding)
        }
        #expect(throws: UploaderError.self) {
            try BodyCompression.decompress(compressed, encoding: encoding, limit: 100)
        }
    }

    @Test func seededRandomIsReproducibleAndIdsAreLowercaseHex() {
        let first = RandomSource(seed: 42)
        let second = RandomSource(seed: 42)
        let ids = (0..<100).map { _ in first.identifier() }
        #expect(ids == (0..<100).map { _ in second.identifier() })
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { Hex.isLowercaseHex($0, length: 32) })
        #expect(Hex.isLowercaseHex(first.hex(byteCount: 8), length: 16))
        for bound: UInt64 in [0, 1, 9, 1_000] {
            #expect((0..<200).allSatisfy { _ in first.uniform(upTo: bound) <= bound })
        }
    }

    @Test func backoffCeilingDoublesUpToTheCapAndJitterStaysBelowIt() {
        // The default policy's backoff: 1 s doubling up to 5 min.
        let backoff = UploadPolicy().backoff
        #expect(backoff.ceilingMilliseconds(failures: 1) == 1_000)
        #expect(backoff.ceilingMilliseconds(failures: 2) == 2_000)
        #expect(backoff.ceilingMilliseconds(failures: 5) == 16_000)
        #expect(backoff.ceilingMilliseconds(failures: 9) == 256_000)
        #expect(backoff.ceilingMilliseconds(failures: 10) == 300_000)
        #expect(backoff.ceilingMilliseconds(failures: 500) == 300_000)
        let random = RandomSource(seed: 3)
        let delays = (0..<500).map { _ in backoff.delayMilliseconds(failures: 4, random: random) }
        #expect(delays.allSatisfy { $0 >= 0 && $0 <= 8_000 })
        // Full jitter spreads over the whole window rather than clustering at the ceiling.
        #expect(delays.contains { $0 < 2_000 })
        #expect(delays.contains { $0 > 6_000 })
    }

    @Test func outcomesFollowTheResponseRules() {
        let now: Int64 = 1_000_000
        func classify(_ status: Int, _ headers: [String: String] = [:], _ body: String = "") -> UploadOutcome {
            UploadOutcome.classify(
                UploadResponse(status: status, headers: headers, body: Array(body.utf8)), signal: .logs, now: now)
        }
        #expect(classify(200, [:], "{}") == .delivered(duplicate: false))
        #expect(classify(202) == .delivered(duplicate: false))
        #expect(classify(200, ["Apsio-Duplicate": "true"]) == .delivered(duplicate: true))
        #expect(
            classify(200, [:], #"{"partialSuccess":{"rejectedLogRecords":"3","errorMessage":"too big"}}"#)
                == .partiallyDelivered(rejected: 3, message: "too big"))
        #expect(classify(200, [:], #"{"partialSuccess":{"rejectedLogRecords":"0"}}"#) == .delivered(duplicate: false))
        for status in [400, 413, 415] {
            #expect(classify(status) == .rejected(status: status))
        }
        #expect(classify(401) == .authenticationRequired(status: 401))
        #expect(classify(403) == .authenticationRequired(status: 403))
        #expect(classify(429, ["Retry-After": "7"]) == .throttled(status: 429, delayMilliseconds: 7_000))
        #expect(classify(503, ["retry-after": "7"]) == .throttled(status: 503, delayMilliseconds: 7_000))
        #expect(classify(429) == .retryable(status: 429, message: "HTTP 429 without a usable Retry-After"))
        #expect(classify(500) == .retryable(status: 500, message: "HTTP 500"))
        #expect(classify(404) == .retryable(status: 404, message: "HTTP 404"))
    }

    @Test func partialSuccessKeysFollowTheSignal() {
        let spans = UploadOutcome.partialSuccess(
            Array(#"{"partialSuccess":{"rejectedSpans":2}}"#.utf8), signal: .traces)
        #expect(spans?.0 == 2)
        let points = UploadOutcome.partialSuccess(
            Array(#"{"partialSuccess":{"rejectedDataPoints":"5"}}"#.utf8), signal: .metrics)
        #expect(points?.0 == 5)
        #expect(UploadOutcome.partialSuccess(Array("not json".utf8), signal: .logs) == nil)
    }
}
