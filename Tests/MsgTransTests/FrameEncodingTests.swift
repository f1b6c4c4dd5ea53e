import MsgTrans
import PulseKit
import Testing

@Suite("Frame encoding")
struct FrameEncodingTests {
    @Test func workedExample1EncodesToTheSpecBytes() {
        let frame = Frame(packetType: .request, bizType: 100, messageID: 0x0102_0304, payload: Array("hi".utf8))
        #expect(
            frame.encoded() == [
                0x01, 0x00, 0x01, 0x64, 0x01, 0x02, 0x03, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x68,
                0x69,
            ])
    }

    @Test func workedExampleHeadersEncodeToTheSpecBytes() throws {
        let cases: [(FrameHeader, String)] = [
            (
                FrameHeader(packetType: .request, bizType: 1, messageID: 1, payloadLength: 327),
                "01 00 01 01 00 00 00 01 00 00 00 00 01 47 00 00"
            ),
            (
                FrameHeader(packetType: .response, bizType: 1, messageID: 1, payloadLength: 185),
                "01 00 02 01 00 00 00 01 00 00 00 00 00 b9 00 00"
            ),
            (
                FrameHeader(compression: .zstd, packetType: .request, bizType: 5, messageID: 3, payloadLength: 2048),
                "01 01 01 05 00 00 00 03 00 00 00 00 08 00 00 00"
            ),
            (
                FrameHeader(packetType: .response, bizType: 5, messageID: 4, payloadLength: 33),
                "01 00 02 05 00 00 00 04 00 00 00 00 00 21 00 00"
            ),
        ]
        for (header, hex) in cases {
            let expected = try Hex.decode(hex)
            #expect(header.encoded() == expected)
            #expect(try FrameHeader(decoding: expected) == header)
        }
    }

    @Test func workedExamplePayloadSizesMatchTheSpec() throws {
        #expect(Array(Payloads.connectRequest.utf8).count == 327)
        #expect(Array(Payloads.connectResponse.utf8).count == 185)
        let ack = try Frame.make(
            packetType: .response, bizType: 5, messageID: 4,
            plaintext: Array(#"{"code":0,"msg":null,"data":true}"#.utf8), preferred: .zstd)
        #expect(Array(ack.encoded().prefix(16)) == (try Hex.decode("01 00 02 05 00 00 00 04 00 00 00 00 00 21 00 00")))
    }

    @Test func headerFieldsRoundTripIncludingExtremes() throws {
        let header = FrameHeader(
            compression: .zlib, packetType: .oneWay, bizType: 255, messageID: .max, extensionHeaderLength: 0xABCD,
            payloadLength: 0x89AB_CDEF, flags: 0xFFFF)
        let bytes = header.encoded()
        #expect(bytes.count == FrameHeader.size)
        #expect(Hex.compact(bytes) == "010200ffffffffffabcd89abcdefffff")
        let unlimited = FrameLimits(maxPayloadBytes: .max, maxExtensionHeaderBytes: .max)
        #expect(try FrameHeader(decoding: bytes, limits: unlimited) == header)
        #expect(header.frameLength == 16 + 0xABCD + 0x89AB_CDEF)
    }

    @Test func headerDecodingChecksLimitsAndLength() throws {
        let bytes = FrameHeader(packetType: .request, bizType: 1, messageID: 1, payloadLength: 100).encoded()
        let tooSmall = #expect(throws: MsgTransError.self) {
            try FrameHeader(decoding: bytes, limits: FrameLimits(maxPayloadBytes: 99))
        }
        #expect(tooSmall?.code == .payloadTooLarge)
        let short = #expect(throws: MsgTransError.self) { try FrameHeader(decoding: Array(bytes.prefix(15))) }
        #expect(short?.code == .incompleteFrame)
    }

    @Test func frameHeaderReflectsTheParts() {
        let frame = Frame(
            compression: .zstd, packetType: .response, bizType: 7, messageID: 9, flags: 0x0004,
            extensionHeader: [1, 2, 3], payload: [4, 5, 6, 7])
        let header = frame.header
        #expect(header.extensionHeaderLength == 3)
        #expect(header.payloadLength == 4)
        #expect(header.flags == 0x0004)
        #expect(frame.encodedLength == 23)
        var appended: [UInt8] = [0xEE]
        frame.encode(into: &appended)
        #expect(appended == [0xEE] + frame.encoded())
        #expect(Array(frame.encoded().suffix(7)) == [1, 2, 3, 4, 5, 6, 7])
    }
}
