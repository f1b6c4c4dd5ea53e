import MsgTrans
import PulseKit
import Testing

/// One test per error case, each on its golden fixture.
@Suite("Error cases")
struct ErrorCaseTests {
    // MARK: Header errors, detected from the 16 header bytes alone

    /// Feeds only the header of the named fixture and returns the error `next()` throws.
    private func headerOnlyError(_ name: String) throws -> MsgTransError? {
        let fixture = try Fixtures.named(name)
        let bytes = try Fixtures.bytes(of: fixture)
        var decoder = FrameDecoder(limits: fixture.frameLimits)
        decoder.append(Array(bytes.prefix(FrameHeader.size)))
        let error = #expect(throws: MsgTransError.self) { try decoder.next() }
        #expect(decoder.bufferedByteCount == FrameHeader.size)
        return error
    }

    /// A bad version, an unknown packet type or compression, or a payload length over the limit:
    /// fatal for the connection, from the header alone.
    @Test(arguments: [
        ("bad-version-0", MsgTransError.Code.unsupportedVersion), ("bad-version-2", .unsupportedVersion),
        ("bad-version-ff", .unsupportedVersion), ("http-request-as-frame", .unsupportedVersion),
        ("unknown-packet-type-3", .unknownPacketType), ("unknown-packet-type-ff", .unknownPacketType),
        ("unknown-compression-3", .unknownCompression), ("unknown-compression-ff", .unknownCompression),
        ("payload-over-limit", .payloadTooLarge), ("payload-len-over-default-limit", .payloadTooLarge),
        ("payload-len-u32-max", .payloadTooLarge),
    ])
    func fatalHeaderError(_ name: String, _ code: MsgTransError.Code) throws {
        let error = try headerOnlyError(name)
        #expect(error?.code == code, "\(name)")
        #expect(error?.isConnectionFatal == true)
    }

    @Test func oversizedExtensionHeaderIsRejectedFromTheHeader() throws {
        for name in ["ext-header-over-limit", "ext-header-over-default-limit", "ext-header-u16-max"] {
            let error = try headerOnlyError(name)
            #expect(error?.code == .extensionHeaderTooLarge, "\(name)")
        }
    }

    @Test func lengthsExactlyAtTheLimitAreAccepted() throws {
        for name in ["payload-at-limit", "ext-header-at-limit"] {
            let fixture = try Fixtures.named(name)
            var decoder = FrameDecoder(limits: fixture.frameLimits)
            decoder.append(try Fixtures.bytes(of: fixture))
            #expect(try decoder.next() != nil, "\(name)")
        }
        for name in ["payload-len-at-default-limit-header-only", "ext-header-at-default-limit-header-only"] {
            var decoder = FrameDecoder()
            decoder.append(try Fixtures.bytes(name))
            #expect(try decoder.next() == nil, "\(name): valid header, waits for the body")
            #expect(decoder.bufferedByteCount == FrameHeader.size)
        }
    }

    @Test func framingErrorsAreSticky() throws {
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("bad-version-2"))
        #expect(throws: MsgTransError.self) { try decoder.next() }
        let buffered = decoder.bufferedByteCount
        decoder.append(try Fixtures.bytes("example-1-request-hi"))
        #expect(decoder.bufferedByteCount == buffered, "bytes after a framing error are discarded")
        let again = #expect(throws: MsgTransError.self) { try decoder.next() }
        #expect(again?.code == .unsupportedVersion)
        let atClose = #expect(throws: MsgTransError.self) { try decoder.finish() }
        #expect(atClose?.code == .unsupportedVersion)
    }

    // MARK: Incomplete frames

    @Test func truncatedFrameYieldsNilUntilComplete() throws {
        for name in ["truncated-header", "truncated-header-15", "truncated-body", "truncated-one-byte-short"] {
            let prefix = try Fixtures.bytes(name)
            var decoder = FrameDecoder()
            decoder.append(prefix)
            #expect(try decoder.next() == nil, "\(name)")
            #expect(decoder.bufferedByteCount == prefix.count)
        }
        // The last fixture is the heartbeat frame minus one byte: the final byte completes it.
        let almost = try Fixtures.bytes("truncated-one-byte-short")
        var decoder = FrameDecoder()
        decoder.append(almost)
        #expect(try decoder.next() == nil)
        decoder.append([UInt8(ascii: "}")])
        let frame = try #require(try decoder.next())
        #expect(frame.payload == Array(Payloads.heartbeat.utf8))
        #expect(frame.bizType == 2)
    }

    @Test func connectionClosedMidFrameIsIncompleteFrame() throws {
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("truncated-body"))
        #expect(try decoder.next() == nil)
        let error = #expect(throws: MsgTransError.self) { try decoder.finish() }
        #expect(error?.code == .incompleteFrame)
        #expect(error?.isConnectionFatal == true)

        var clean = FrameDecoder()
        clean.append(try Fixtures.bytes("example-5-ack"))
        _ = try clean.next()
        try clean.finish()
    }

    // MARK: Payload errors, reported by plaintext(limits:)

    /// Decodes the named single-frame fixture and returns the error of `plaintext(limits:)`.
    private func plaintextError(_ name: String) throws -> MsgTransError? {
        let fixture = try Fixtures.named(name)
        var decoder = FrameDecoder(limits: fixture.frameLimits)
        decoder.append(try Fixtures.bytes(of: fixture))
        let frame = try #require(try decoder.next(), "\(name) frames correctly")
        let error = #expect(throws: MsgTransError.self) { try frame.plaintext(limits: fixture.frameLimits) }
        #expect(error?.isConnectionFatal == false)
        return error
    }

    /// Truncated streams, bytes after the stream, invalid streams and small bombs over the
    /// fixture's limit, for zstd and the zlib format alike.
    @Test(arguments: [
        ("zstd-truncated-stream", MsgTransError.Code.truncatedStream), ("zstd-truncated-last-byte", .truncatedStream),
        ("zstd-empty-payload", .truncatedStream), ("zlib-truncated-stream", .truncatedStream),
        ("zlib-truncated-checksum", .truncatedStream), ("zlib-empty-payload", .truncatedStream),
        ("zstd-trailing-garbage", .trailingBytes), ("zstd-two-frames", .trailingBytes),
        ("zlib-trailing-garbage", .trailingBytes),
        ("zstd-label-on-plaintext", .decompressionFailed), ("zstd-label-on-zlib", .decompressionFailed),
        ("zstd-skippable-frame", .decompressionFailed), ("zstd-corrupt-block", .decompressionFailed),
        ("zlib-label-on-plaintext", .decompressionFailed), ("zlib-label-on-zstd", .decompressionFailed),
        ("zlib-bad-adler32", .decompressionFailed), ("zlib-gzip-wrapper", .decompressionFailed),
        ("zstd-bomb-small", .decompressedTooLarge), ("zstd-decompressed-one-over-limit", .decompressedTooLarge),
        ("zlib-bomb-small", .decompressedTooLarge), ("zlib-decompressed-one-over-limit", .decompressedTooLarge),
    ])
    func payloadError(_ name: String, _ code: MsgTransError.Code) throws {
        #expect(try plaintextError(name)?.code == code, "\(name)")
    }

    @Test func realZstdBombsHitTheDefaultLimit() throws {
        for name in ["zstd-bomb-17mib", "zstd-bomb-17mib-no-content-size"] {
            let fixture = try Fixtures.named(name)
            #expect(fixture.limits == nil, "uses the default 16 MiB limit")
            #expect(try plaintextError(name)?.code == .decompressedTooLarge, "\(name)")
        }
        // The rewritten frame really has no content size: descriptor bits 7-6 are zero.
        var decoder = FrameDecoder()
        decoder.append(try Fixtures.bytes("zstd-bomb-17mib-no-content-size"))
        let frame = try #require(try decoder.next())
        #expect(frame.payload[4] & 0xE0 == 0)
    }

    @Test func realZlibBombHitsTheDefaultLimit() throws {
        let fixture = try Fixtures.named("zlib-bomb-17mib")
        #expect(fixture.limits == nil)
        let bytes = try Fixtures.bytes(of: fixture)
        #expect((12 << 10)...(24 << 10) ~= bytes.count, "a ~20 KiB frame")
        #expect(try plaintextError("zlib-bomb-17mib")?.code == .decompressedTooLarge)
    }

    @Test func decompressingExactlyToTheLimitIsAccepted() throws {
        for name in ["zstd-decompressed-at-limit", "zlib-decompressed-at-limit"] {
            let fixture = try Fixtures.named(name)
            var decoder = FrameDecoder(limits: fixture.frameLimits)
            decoder.append(try Fixtures.bytes(of: fixture))
            let frame = try #require(try decoder.next())
            let plaintext = try frame.plaintext(limits: fixture.frameLimits)
            #expect(plaintext.count == fixture.frameLimits.maxDecompressedBytes, "\(name)")
        }
    }
}
