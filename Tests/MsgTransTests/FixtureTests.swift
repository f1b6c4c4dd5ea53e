import Foundation
import MsgTrans
import PulseKit
import Testing

/// Decodes every checked-in fixture as its manifest entry describes and re-encodes it.
@Suite("Golden fixtures")
struct FixtureTests {
    @Test("The manifest lists every fixture file and every listed file exists")
    func manifestMatchesFolder() throws {
        let files = Set(try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory.path))
        let hexFiles = files.filter { $0.hasSuffix(".hex") }
        let listed = Set(Fixtures.all.map(\.file))
        #expect(listed == hexFiles)
        #expect(Fixtures.all.count == listed.count, "fixture files are listed once")
        #expect(Set(Fixtures.all.map(\.name)).count == Fixtures.all.count, "fixture names are unique")
        let plaintextFiles = Set(Fixtures.all.compactMap(\.plaintextFile))
        #expect(plaintextFiles.isSubset(of: files))
        #expect(files == hexFiles.union(plaintextFiles).union(["manifest.json"]), "no unreferenced files")
        let required = [
            "example-1-request-hi", "example-2-connect-request", "example-3-connect-response",
            "example-4-zstd-event-batch", "example-5-ack", "zstd-event-batch", "zlib-event-batch", "extension-header",
            "payload-at-limit", "payload-over-limit", "bad-version-2", "unknown-packet-type-3", "unknown-compression-3",
            "truncated-body", "zstd-truncated-stream", "zlib-truncated-stream", "payload-len-over-default-limit",
            "ext-header-over-default-limit", "zstd-bomb-small", "zlib-bomb-small", "zlib-bomb-17mib",
            "zstd-bomb-17mib", "zstd-trailing-garbage", "zlib-trailing-garbage",
        ]
        #expect(Set(required).isSubset(of: Set(Fixtures.all.map(\.name))))
    }

    @Test("Every error code named in the manifest exists")
    func manifestErrorCodesExist() throws {
        for fixture in Fixtures.all {
            for name in [fixture.decodeError, fixture.plaintextError].compactMap(\.self) {
                _ = try Fixtures.code(named: name)
            }
        }
    }

    @Test("Fixture decodes as described", arguments: Fixtures.all)
    func decodesAsDescribed(_ fixture: FixtureCase) throws {
        let bytes = try Fixtures.bytes(of: fixture)
        var decoder = FrameDecoder(limits: fixture.frameLimits)
        decoder.append(bytes)
        switch fixture.expect {
        case .frame:
            let frame = try #require(try decoder.next())
            #expect(decoder.bufferedByteCount == 0)
            #expect(try decoder.next() == nil)
            #expect(frame.encoded() == bytes, "re-encoding gives the same bytes")
            try checkFields(frame, fixture)
            try checkPlaintext(frame, fixture)
        case .partial:
            #expect(try decoder.next() == nil)
            #expect(decoder.bufferedByteCount == bytes.count, "a partial frame consumes nothing")
            #expect(try decoder.next() == nil)
        case .decodeError:
            let code = try Fixtures.code(named: try #require(fixture.decodeError))
            let error = #expect(throws: MsgTransError.self) { try decoder.next() }
            #expect(error?.code == code)
            #expect(error?.isConnectionFatal == true)
            // The same error from the 16 header bytes alone: the body is never needed.
            var headerOnly = FrameDecoder(limits: fixture.frameLimits)
            headerOnly.append(Array(bytes.prefix(FrameHeader.size)))
            let headerError = #expect(throws: MsgTransError.self) { try headerOnly.next() }
            #expect(headerError?.code == code)
            #expect(headerOnly.bufferedByteCount == FrameHeader.size)
        }
    }

    private func checkFields(_ frame: Frame, _ fixture: FixtureCase) throws {
        let fields = try #require(fixture.frame)
        #expect("\(frame.compression)" == fields.compression)
        #expect("\(frame.packetType)" == fields.packetType)
        #expect(frame.bizType == fields.bizType)
        #expect(frame.messageID == fields.messageID)
        #expect(frame.flags == fields.flags)
        #expect(frame.extensionHeader.count == fields.extensionHeaderLength)
        #expect(frame.payload.count == fields.payloadLength)
        #expect(Int(frame.header.payloadLength) == fields.payloadLength)
        if let header = fixture.header {
            #expect(Hex.compact(frame.header.encoded()) == header)
        }
    }

    private func checkPlaintext(_ frame: Frame, _ fixture: FixtureCase) throws {
        if let expected = try Fixtures.plaintext(of: fixture) {
            #expect(try frame.plaintext(limits: fixture.frameLimits) == expected)
        }
        if let name = fixture.plaintextError {
            let code = try Fixtures.code(named: name)
            let error = #expect(throws: MsgTransError.self) { try frame.plaintext(limits: fixture.frameLimits) }
            #expect(error?.code == code)
            #expect(error?.isConnectionFatal == false, "payload errors keep the connection")
        }
        if let length = fixture.unboundedPlaintextLength {
            // The bomb is a genuine, valid stream: with room for it, it decompresses completely.
            let roomy = FrameLimits(maxDecompressedBytes: length)
            #expect(try frame.plaintext(limits: roomy).count == length)
        }
        #expect(fixture.plaintextFile != nil || fixture.plaintextError != nil, "every frame fixture checks its payload")
    }
}
