import MsgTrans
import PulseKit
import Testing

@Suite("MsgTransError")
struct MsgTransErrorTests {
    @Test func framingErrorsAreFatalPayloadErrorsAreNot() {
        let fatal: Set<MsgTransError.Code> = [
            .unsupportedVersion, .unknownPacketType, .unknownCompression, .payloadTooLarge, .extensionHeaderTooLarge,
            .incompleteFrame,
        ]
        for code in MsgTransError.Code.allCases {
            #expect(MsgTransError(code, "x").isConnectionFatal == fatal.contains(code), "\(code)")
        }
    }

    @Test func descriptionNamesTheCodeAndNeverThePayload() throws {
        let secret = "top-secret-token-1234567890"
        let plaintext = Array(String(repeating: secret, count: 100).utf8)
        let compressed = try PayloadCompressor.compress(plaintext, with: .zlib)
        let error = #expect(throws: MsgTransError.self) {
            try PayloadCompressor.decompress(compressed + Array(secret.utf8), with: .zlib, maxOutputBytes: 1 << 20)
        }
        let description = try #require(error).description
        #expect(description.hasPrefix("MsgTransError.trailingBytes: "))
        #expect(!description.contains(secret))

        struct Cause: Error {}
        let wrapped = MsgTransError(.compressionFailed, "failed", underlying: Cause())
        #expect(wrapped.description.contains("underlying"))
        #expect(wrapped.underlying is Cause)
    }
}
