import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import Testing

@Suite struct CrashBatchCodecTests {
    @Test func fastRoundTripIsByteIdentical() throws {
        let batch = Samples.crashBatch
        let bytes = batch.encodeJSON()
        let decoded = try CrashBatch(decodingJSON: bytes)
        #expect(decoded == batch)
        #expect(decoded.encodeJSON() == bytes)
    }

    @Test func canonicalCrashReportWritesEveryFieldWithNulls() {
        let report = CrashReport(
            crashId: "c1", timestamp: 9, sessionId: nil, build: CrashBuild(appVersion: nil))
        #expect(
            report.encodeJSON()
                == utf8(
                    #"{"crashId":"c1","timestamp":9,"sessionId":null,"signal":null,"exceptionType":null,"message":null,"#
                        + #""stack":null,"build":{"appVersion":null,"buildNumber":0,"imageUuids":[],"osVersion":null,"#
                        + #""architecture":null},"attachments":[],"attributes":{}}"#))
    }

    @Test func stackIsFramesOrText() throws {
        let text = try CrashStack(decodingJSON: utf8(#""0 ShopKit 0x1""#))
        #expect(text == .text("0 ShopKit 0x1"))
        let frames = try CrashStack(decodingJSON: utf8(#"[{"symbol":"main","line":3,"extra":true},{}]"#))
        #expect(frames == .frames([CrashFrame(symbol: "main", line: 3), CrashFrame()]))
        do {
            _ = try CrashStack(decodingJSON: utf8(#"[{"line":"x"}]"#))
            Issue.record("accepted a string line")
        } catch {
            #expect(error.message == "$[0].line: expected an integer")
        }
        #expect(throws: PulseProtocolError.self) { try CrashStack(decodingJSON: utf8("42")) }
    }

    @Test func attachmentMetadataIsValidated() throws {
        let good = Samples.crash(0).attachments[0]
        #expect(try CrashAttachment(decodingJSON: good.encodeJSON()) == good)
        var upper = good
        upper.sha256 = good.sha256.uppercased()
        var short = good
        short.sha256 = "abc"
        var negative = good
        negative.byteCount = -1
        for bad in [upper, short, negative] {
            #expect(throws: PulseProtocolError.self) { try CrashAttachment(decodingJSON: bad.encodeJSON()) }
        }
    }

    @Test func errorsNameTheCrashAndField() throws {
        var batch = Samples.crashBatch
        batch.crashes[1].attachments[0].sha256 = "nope"
        do {
            _ = try CrashBatch(decodingJSON: batch.encodeJSON())
            Issue.record("accepted a bad digest")
        } catch {
            #expect(error.message == "$.crashes[1].attachments[0].sha256: expected 64 lowercase hex characters")
        }
        let empty =
            #"{"identity":"# + String(decoding: Samples.identity.encodeJSON(), as: UTF8.self)
            + #","crashes":[],"batchId":"b"}"#
        #expect(throws: PulseProtocolError.self) { try CrashBatch(decodingJSON: utf8(empty)) }
    }
}
