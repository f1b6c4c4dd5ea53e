import Foundation
import MsgTrans
import PulseKit

/// Builds every golden fixture from scratch. Only `scripts/regenerate-msgtrans-fixtures.sh` (through
/// the env-gated `regenerateFixtures` test) calls it; ordinary tests read the checked-in files.
///
/// Compressed bytes depend on the libzstd/zlib versions that produce them, so regenerating may
/// change them; the payload plaintexts and every non-compressed byte are deterministic.
struct FixtureGenerator {
    struct Output {
        var manifest: FixtureManifest
        /// File name -> contents.
        var files: [String: [UInt8]]
    }

    private var fixtures: [FixtureCase] = []
    private var files: [String: [UInt8]] = [:]

    static func generate() throws -> Output {
        var generator = FixtureGenerator()
        try generator.build()
        let manifest = FixtureManifest(
            format:
                "Each fixture file holds one frame (or frame prefix) as hex: whitespace is ignored and '#' starts a "
                + "comment. expect=frame: decodes to one frame with the given fields and re-encodes to the same bytes; "
                + "expect=partial: the decoder returns nil and consumes nothing; expect=decodeError: the decoder "
                + "throws decodeError, already with only the 16 header bytes. plaintextFile/plaintextError describe "
                + "Frame.plaintext(limits:) under the fixture's limits. Compressed payloads were produced by the "
                + "libzstd/zlib of the generating machine (see FixtureGenerator.swift) and are pinned here.",
            fixtures: generator.fixtures)
        return Output(manifest: manifest, files: generator.files)
    }

    // MARK: - Fixture set

    private mutating func build() throws {
        try workedExamples()
        try compressedPayloads()
        try sizeLimits()
        try headerErrors()
        try partialFrames()
        try payloadErrors()
        try bombs()
    }

    /// The five worked examples of wire-reference.md section 1.
    private mutating func workedExamples() throws {
        add(
            "example-1-request-hi", "wire-reference §1: request, biz 100, id 0x01020304, payload \"hi\"",
            frame: Frame(packetType: .request, bizType: 100, messageID: 0x0102_0304, payload: Array("hi".utf8)),
            header: "01 00 01 64 01 02 03 04 00 00 00 00 00 02 00 00", plaintext: Array("hi".utf8))

        let connect = Array(Payloads.connectRequest.utf8)
        precondition(connect.count == 327)
        add(
            "example-2-connect-request", "wire-reference §1: first CLIENT_CONNECT, id 1, 327-byte JSON, uncompressed",
            frame: Frame(packetType: .request, bizType: 1, messageID: 1, payload: connect),
            header: "01 00 01 01 00 00 00 01 00 00 00 00 01 47 00 00", plaintext: connect)

        let connectResult = Array(Payloads.connectResponse.utf8)
        precondition(connectResult.count == 185)
        add(
            "example-3-connect-response", "wire-reference §1: CLIENT_CONNECT response, id 1, biz echoed, 185 bytes",
            frame: Frame(packetType: .response, bizType: 1, messageID: 1, payload: connectResult),
            header: "01 00 02 01 00 00 00 01 00 00 00 00 00 b9 00 00", plaintext: connectResult)

        let (batch, compressed) = try Payloads.eventBatchCompressingTo(2048)
        add(
            "example-4-zstd-event-batch",
            "wire-reference §1: zstd event batch, id 3, 2048 compressed bytes (a deterministic "
                + "\(batch.count)-byte batch whose zstd level-3 frame is exactly 2048 bytes with this libzstd)",
            frame: Frame(compression: .zstd, packetType: .request, bizType: 5, messageID: 3, payload: compressed),
            header: "01 01 01 05 00 00 00 03 00 00 00 00 08 00 00 00", plaintext: batch,
            plaintextFile: "event-batch.json")

        let ack = Array(#"{"code":0,"msg":null,"data":true}"#.utf8)
        add(
            "example-5-ack", "wire-reference §1: ack {\"code\":0,\"msg\":null,\"data\":true} (33 bytes) for id 4",
            frame: Frame(packetType: .response, bizType: 5, messageID: 4, payload: ack),
            header: "01 00 02 05 00 00 00 04 00 00 00 00 00 21 00 00", plaintext: ack)
    }

    private mutating func compressedPayloads() throws {
        let batch = Payloads.eventBatch(eventCount: 48, padding: 0)
        let zlib = try PayloadCompressor.compress(batch, with: .zlib)
        precondition(zlib.starts(with: [0x78, 0x9C]))
        add(
            "zlib-event-batch", "zlib (RFC 1950, default level, header 78 9c) event batch, id 6",
            frame: Frame(compression: .zlib, packetType: .request, bizType: 5, messageID: 6, payload: zlib),
            plaintext: batch)

        let zstd = try PayloadCompressor.compress(batch, with: .zstd)
        add(
            "zstd-event-batch", "zstd level-3 event batch (same plaintext as zlib-event-batch), id 7",
            frame: Frame(compression: .zstd, packetType: .request, bizType: 5, messageID: 7, payload: zstd),
            plaintext: batch, plaintextFile: "zlib-event-batch.plaintext")

        add(
            "zstd-empty-plaintext", "zstd frame of an empty plaintext (valid, decompresses to nothing)",
            frame: Frame(
                compression: .zstd, packetType: .oneWay, bizType: 0, messageID: 8,
                payload: try PayloadCompressor.compress([], with: .zstd)),
            plaintext: [])
        add(
            "zlib-empty-plaintext", "zlib stream of an empty plaintext (valid, decompresses to nothing)",
            frame: Frame(
                compression: .zlib, packetType: .oneWay, bizType: 0, messageID: 9,
                payload: try PayloadCompressor.compress([], with: .zlib)),
            plaintext: [])

        let route = Array("route=telemetry.flush".utf8)
        let rpc = Array(#"{"route":"telemetry.flush","args":{},"schemaVersion":1}"#.utf8)
        add(
            "extension-header",
            "request with a 21-byte extension header and flags 0x0006 (high priority, route tag), biz 7",
            frame: Frame(
                packetType: .request, bizType: 7, messageID: 0xFFFF_FFFF, flags: 0x0006, extensionHeader: route,
                payload: rpc),
            plaintext: rpc)
    }

    private mutating func sizeLimits() throws {
        let small = FixtureLimits(maxPayloadBytes: 256, maxExtensionHeaderBytes: 32, maxDecompressedBytes: 4096)
        let atLimit = Payloads.filler(count: 256, seed: 1)
        add(
            "payload-at-limit", "payload_len exactly maxPayloadBytes (256 under the test limits) is accepted",
            frame: Frame(packetType: .oneWay, bizType: 9, messageID: 10, payload: atLimit), limits: small,
            plaintext: atLimit)
        addError(
            "payload-over-limit", "payload_len one above maxPayloadBytes (257 > 256) is rejected from the header",
            bytes: Frame(packetType: .oneWay, bizType: 9, messageID: 11, payload: Payloads.filler(count: 257, seed: 2))
                .encoded(),
            code: .payloadTooLarge, limits: small)

        let extension32 = Payloads.filler(count: 32, seed: 3)
        add(
            "ext-header-at-limit", "ext_header_len exactly maxExtensionHeaderBytes (32 under the test limits)",
            frame: Frame(
                packetType: .request, bizType: 9, messageID: 12, extensionHeader: extension32, payload: [0x7B, 0x7D]),
            limits: small, plaintext: [0x7B, 0x7D])
        addError(
            "ext-header-over-limit", "ext_header_len one above maxExtensionHeaderBytes (33 > 32)",
            bytes: Frame(
                packetType: .request, bizType: 9, messageID: 13, extensionHeader: Payloads.filler(count: 33, seed: 4),
                payload: [0x7B, 0x7D]
            ).encoded(),
            code: .extensionHeaderTooLarge, limits: small)

        addPartial(
            "payload-len-at-default-limit-header-only",
            "header announcing exactly 64 MiB (the default maxPayloadBytes): accepted, waits for the body",
            bytes: header(payloadLength: 64 << 20))
        addError(
            "payload-len-over-default-limit", "header announcing 64 MiB + 1 byte, nothing else: payloadTooLarge",
            bytes: header(payloadLength: (64 << 20) + 1), code: .payloadTooLarge)
        addError(
            "payload-len-u32-max", "header announcing 4 GiB - 1 bytes: payloadTooLarge before any body byte",
            bytes: header(payloadLength: UInt32.max), code: .payloadTooLarge)
        addPartial(
            "ext-header-at-default-limit-header-only",
            "header announcing a 4096-byte extension header (the default limit): accepted, waits for the rest",
            bytes: header(extensionHeaderLength: 4096))
        addError(
            "ext-header-over-default-limit", "header announcing a 4097-byte extension header: extensionHeaderTooLarge",
            bytes: header(extensionHeaderLength: 4097), code: .extensionHeaderTooLarge)
        addError(
            "ext-header-u16-max", "header announcing a 65535-byte extension header: extensionHeaderTooLarge",
            bytes: header(extensionHeaderLength: 0xFFFF), code: .extensionHeaderTooLarge)
    }

    private mutating func headerErrors() throws {
        let valid = Frame(packetType: .request, bizType: 5, messageID: 20, payload: Array("{}".utf8)).encoded()
        func patched(_ offset: Int, _ value: UInt8) -> [UInt8] {
            var bytes = valid
            bytes[offset] = value
            return bytes
        }
        addError("bad-version-0", "version byte 0", bytes: patched(0, 0), code: .unsupportedVersion)
        addError("bad-version-2", "version byte 2 (a future version)", bytes: patched(0, 2), code: .unsupportedVersion)
        addError("bad-version-ff", "version byte 0xff", bytes: patched(0, 0xFF), code: .unsupportedVersion)
        addError("unknown-compression-3", "compression byte 3", bytes: patched(1, 3), code: .unknownCompression)
        addError(
            "unknown-compression-ff", "compression byte 0xff", bytes: patched(1, 0xFF), code: .unknownCompression)
        addError("unknown-packet-type-3", "packet_type byte 3", bytes: patched(2, 3), code: .unknownPacketType)
        addError(
            "unknown-packet-type-ff", "packet_type byte 0xff", bytes: patched(2, 0xFF), code: .unknownPacketType)
        addError(
            "http-request-as-frame", "an HTTP request line sent to the msgtrans port",
            bytes: Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8), code: .unsupportedVersion)
    }

    private mutating func partialFrames() throws {
        let full = Frame(packetType: .request, bizType: 2, messageID: 30, payload: Array(Payloads.heartbeat.utf8))
            .encoded()
        addPartial("truncated-header", "the first 10 bytes of a header", bytes: Array(full.prefix(10)))
        addPartial("truncated-header-15", "15 of the 16 header bytes", bytes: Array(full.prefix(15)))
        addPartial(
            "truncated-body", "a complete header and half of the payload", bytes: Array(full.prefix(16 + 20)))
        addPartial(
            "truncated-one-byte-short", "a frame missing its last payload byte", bytes: Array(full.dropLast()))
    }

    private mutating func payloadErrors() throws {
        let plain = Payloads.eventBatch(eventCount: 12, padding: 0)
        let zstd = try PayloadCompressor.compress(plain, with: .zstd)
        let zlib = try PayloadCompressor.compress(plain, with: .zlib)

        addPayloadError(
            "zstd-truncated-stream", "zstd frame cut in the middle (payload_len matches the cut): truncatedStream",
            compression: .zstd, payload: Array(zstd.prefix(zstd.count / 2)), code: .truncatedStream)
        addPayloadError(
            "zstd-truncated-last-byte", "zstd frame missing its last byte", compression: .zstd,
            payload: Array(zstd.dropLast()), code: .truncatedStream)
        addPayloadError(
            "zlib-truncated-stream", "zlib stream cut in the middle: truncatedStream", compression: .zlib,
            payload: Array(zlib.prefix(zlib.count / 2)), code: .truncatedStream)
        addPayloadError(
            "zlib-truncated-checksum", "zlib stream missing the last byte of its Adler-32", compression: .zlib,
            payload: Array(zlib.dropLast()), code: .truncatedStream)
        addPayloadError(
            "zstd-empty-payload", "compression zstd with a zero-length payload", compression: .zstd, payload: [],
            code: .truncatedStream)
        addPayloadError(
            "zlib-empty-payload", "compression zlib with a zero-length payload", compression: .zlib, payload: [],
            code: .truncatedStream)

        addPayloadError(
            "zstd-trailing-garbage", "a valid zstd frame followed by 7 garbage bytes: trailingBytes",
            compression: .zstd, payload: zstd + Array("garbage".utf8), code: .trailingBytes)
        addPayloadError(
            "zstd-two-frames", "two concatenated zstd frames (exactly one is allowed): trailingBytes",
            compression: .zstd, payload: zstd + zstd, code: .trailingBytes)
        addPayloadError(
            "zlib-trailing-garbage", "a valid zlib stream followed by 7 garbage bytes: trailingBytes",
            compression: .zlib, payload: zlib + Array("garbage".utf8), code: .trailingBytes)

        addPayloadError(
            "zstd-label-on-plaintext", "plaintext JSON labelled zstd: decompressionFailed", compression: .zstd,
            payload: plain, code: .decompressionFailed)
        addPayloadError(
            "zlib-label-on-plaintext", "plaintext JSON labelled zlib: decompressionFailed", compression: .zlib,
            payload: plain, code: .decompressionFailed)
        addPayloadError(
            "zstd-label-on-zlib", "a zlib stream labelled zstd: decompressionFailed", compression: .zstd,
            payload: zlib, code: .decompressionFailed)
        addPayloadError(
            "zlib-label-on-zstd", "a zstd frame labelled zlib: decompressionFailed", compression: .zlib,
            payload: zstd, code: .decompressionFailed)
        // A skippable frame: magic 0x184D2A50 little-endian, 4-byte length, content.
        addPayloadError(
            "zstd-skippable-frame", "a zstd skippable frame is not a standard frame: decompressionFailed",
            compression: .zstd, payload: [0x50, 0x2A, 0x4D, 0x18, 0x04, 0x00, 0x00, 0x00, 0x74, 0x65, 0x73, 0x74],
            code: .decompressionFailed)
        var corruptZstd = zstd
        for index in 12..<min(corruptZstd.count, 40) { corruptZstd[index] ^= 0xA5 }
        addPayloadError(
            "zstd-corrupt-block", "zstd frame with corrupted block bytes: decompressionFailed", compression: .zstd,
            payload: corruptZstd, code: .decompressionFailed)
        var badChecksum = zlib
        badChecksum[badChecksum.count - 1] ^= 0xFF
        addPayloadError(
            "zlib-bad-adler32", "zlib stream with a wrong Adler-32: decompressionFailed", compression: .zlib,
            payload: badChecksum, code: .decompressionFailed)
        let gzipHeader: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03]
        addPayloadError(
            "zlib-gzip-wrapper", "a gzip member labelled zlib (RFC 1952 is not RFC 1950): decompressionFailed",
            compression: .zlib, payload: gzipHeader + Array(zlib.dropFirst(2).dropLast(4)), code: .decompressionFailed)
    }

    private mutating func bombs() throws {
        let testLimits = FixtureLimits(maxDecompressedBytes: 4096)
        let sixtyFourK = [UInt8](repeating: 0, count: 64 << 10)
        try addBombs("bomb-small", plaintext: sixtyFourK, limits: testLimits) { codec, container in
            "\(codec) \(container) of 64 KiB of zeros with maxDecompressedBytes 4096"
        }

        let atLimit = Payloads.filler(count: 4096, seed: 5)
        add(
            "zstd-decompressed-at-limit", "zstd payload expanding to exactly maxDecompressedBytes (4096): accepted",
            frame: Frame(
                compression: .zstd, packetType: .request, bizType: 5, messageID: 40,
                payload: try PayloadCompressor.compress(atLimit, with: .zstd)),
            limits: testLimits, plaintext: atLimit)
        add(
            "zlib-decompressed-at-limit", "zlib payload expanding to exactly maxDecompressedBytes (4096): accepted",
            frame: Frame(
                compression: .zlib, packetType: .request, bizType: 5, messageID: 41,
                payload: try PayloadCompressor.compress(atLimit, with: .zlib)),
            limits: testLimits, plaintext: atLimit, plaintextFile: "zstd-decompressed-at-limit.plaintext")
        let overLimit = Payloads.filler(count: 4097, seed: 5)
        try addBombs("decompressed-one-over-limit", plaintext: overLimit, limits: testLimits) { codec, _ in
            "\(codec) payload expanding to 4097 bytes with a 4096 limit"
        }

        // Real bombs against the default 16 MiB limit.
        let seventeenMiB = [UInt8](repeating: 0, count: 17 << 20)
        let zstdBomb = try PayloadCompressor.compress(seventeenMiB, with: .zstd)
        addBomb(
            "zstd-bomb-17mib", "zstd frame of 17 MiB of zeros (declares its content size) vs the default 16 MiB",
            compression: .zstd, payload: zstdBomb, plaintextLength: seventeenMiB.count, limits: nil)
        addBomb(
            "zstd-bomb-17mib-no-content-size",
            "the same zstd frame rewritten without its content size field, so only streaming can bound it",
            compression: .zstd, payload: Payloads.removingContentSize(zstdBomb), plaintextLength: seventeenMiB.count,
            limits: nil)
        let zlibBomb = try PayloadCompressor.compress(seventeenMiB, with: .zlib)
        addBomb(
            "zlib-bomb-17mib", "zlib stream (\(zlibBomb.count) bytes) of 17 MiB of zeros vs the default 16 MiB",
            compression: .zlib, payload: zlibBomb, plaintextLength: seventeenMiB.count, limits: nil)
    }

    // MARK: - Recording

    private func header(payloadLength: UInt32 = 0, extensionHeaderLength: UInt16 = 0) -> [UInt8] {
        FrameHeader(
            packetType: .request, bizType: 5, messageID: 99, extensionHeaderLength: extensionHeaderLength,
            payloadLength: payloadLength
        ).encoded()
    }

    private mutating func add(
        _ name: String, _ description: String, frame: Frame, header: String? = nil, limits: FixtureLimits? = nil,
        plaintext: [UInt8]? = nil, plaintextFile: String? = nil
    ) {
        let fields = FixtureFrameFields(
            compression: "\(frame.compression)", packetType: "\(frame.packetType)", bizType: frame.bizType,
            messageID: frame.messageID, flags: frame.flags, extensionHeaderLength: frame.extensionHeader.count,
            payloadLength: frame.payload.count)
        var plainName: String?
        if let plaintext {
            let file = plaintextFile ?? "\(name).plaintext"
            if let existing = files[file] {
                precondition(existing == plaintext, "\(file) written twice with different contents")
            }
            files[file] = plaintext
            plainName = file
        }
        let bytes = frame.encoded()
        if let header {
            precondition(Array(bytes.prefix(16)) == (try! Hex.decode(header)), "\(name): header mismatch")
        }
        record(
            FixtureCase(
                name: name, file: "\(name).hex", description: description, limits: limits, expect: .frame,
                header: header.map { Hex.compact(try! Hex.decode($0)) }, frame: fields, plaintextFile: plainName),
            bytes: bytes)
    }

    private mutating func addPayloadError(
        _ name: String, _ description: String, compression: Compression, payload: [UInt8], code: MsgTransError.Code
    ) {
        let frame = Frame(compression: compression, packetType: .request, bizType: 5, messageID: 50, payload: payload)
        add(name, description, frame: frame)
        fixtures[fixtures.count - 1].plaintextError = "\(code)"
    }

    private mutating func addBomb(
        _ name: String, _ description: String, compression: Compression, payload: [UInt8], plaintextLength: Int,
        limits: FixtureLimits?
    ) {
        let frame = Frame(compression: compression, packetType: .request, bizType: 5, messageID: 60, payload: payload)
        add(name, description, frame: frame, limits: limits)
        fixtures[fixtures.count - 1].plaintextError = "\(MsgTransError.Code.decompressedTooLarge)"
        fixtures[fixtures.count - 1].unboundedPlaintextLength = plaintextLength
    }

    /// ``addBomb(_:_:compression:payload:plaintextLength:limits:)`` with `plaintext` compressed by
    /// zstd (a "frame"), then by zlib (a "stream"), named `<codec>-<suffix>`.
    private mutating func addBombs(
        _ suffix: String, plaintext: [UInt8], limits: FixtureLimits,
        description: (_ codec: String, _ container: String) -> String
    ) throws {
        for (compression, codec, container) in [(Compression.zstd, "zstd", "frame"), (.zlib, "zlib", "stream")] {
            addBomb(
                "\(codec)-\(suffix)", description(codec, container), compression: compression,
                payload: try PayloadCompressor.compress(plaintext, with: compression),
                plaintextLength: plaintext.count, limits: limits)
        }
    }

    private mutating func addError(
        _ name: String, _ description: String, bytes: [UInt8], code: MsgTransError.Code, limits: FixtureLimits? = nil
    ) {
        record(
            FixtureCase(
                name: name, file: "\(name).hex", description: description, limits: limits, expect: .decodeError,
                decodeError: "\(code)"),
            bytes: bytes)
    }

    private mutating func addPartial(_ name: String, _ description: String, bytes: [UInt8]) {
        record(
            FixtureCase(name: name, file: "\(name).hex", description: description, expect: .partial), bytes: bytes)
    }

    private mutating func record(_ fixture: FixtureCase, bytes: [UInt8]) {
        precondition(!fixtures.contains { $0.name == fixture.name }, "duplicate fixture \(fixture.name)")
        fixtures.append(fixture)
        let text = "# \(fixture.name): \(fixture.description)\n" + Hex.encode(bytes) + "\n"
        files[fixture.file] = Array(text.utf8)
    }
}
