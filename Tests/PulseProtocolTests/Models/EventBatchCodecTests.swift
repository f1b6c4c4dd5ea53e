import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import Testing

@Suite struct EventBatchCodecTests {
    static let small = EventBatch(
        identity: Samples.identity,
        events: [
            PulseEvent(
                id: "0123456789abcdef0123456789abcdef", timestamp: 1_764_400_000_000, sessionId: "s1", kind: .network,
                name: "http", source: EventSource(module: nil, imageUuid: "U"),
                attributes: [
                    JSONMember(key: "status", value: .int(200)), JSONMember(key: "ok", value: .bool(true)),
                    JSONMember(key: "path", value: .string("/v1/a")), JSONMember(key: "lat", value: .double(12.5)),
                    JSONMember(key: "x", value: .null),
                ])
        ], batchId: "b1")

    static let smallJSON =
        #"{"identity":{"projectId":"app_7f3a","installationId":"inst-5b1c9e","deviceId":"dev-0a4471","userId":null,"#
        + #""appVersion":"2.4.1","buildNumber":241,"sdkVersion":"2.3.0","platform":"ios","packageName":"com.example.shop"},"#
        + #""events":[{"id":"0123456789abcdef0123456789abcdef","timestamp":1764400000000,"sessionId":"s1","kind":"Network","#
        + #""name":"http","source":{"module":null,"imageUuid":"U"},"#
        + #""attributes":{"status":200,"ok":true,"path":"/v1/a","lat":12.5,"x":null}}],"batchId":"b1"}"#

    @Test func fastEncodeIsTheCanonicalEncoding() throws {
        #expect(Self.small.encodeJSON() == utf8(Self.smallJSON))
        #expect(try EventBatch(decodingJSON: utf8(Self.smallJSON)) == Self.small)
    }

    @Test func fastRoundTripIsByteIdentical() throws {
        let batch = Samples.eventBatch(count: 64)
        let bytes = batch.encodeJSON()
        let decoded = try EventBatch(decodingJSON: bytes)
        #expect(decoded == batch)
        #expect(decoded.encodeJSON() == bytes)
    }

    @Test func unknownKindIsRejectedByName() throws {
        let json = Self.smallJSON.replacingOccurrences(of: #""kind":"Network""#, with: #""kind":"network""#)
        do {
            _ = try EventBatch(decodingJSON: utf8(json))
            Issue.record("fast decoder accepted an unknown kind")
        } catch {
            #expect(error.code == .unknownEventKind)
            #expect(error.message.hasPrefix("$.events[0].kind: unknown event kind \"network\""))
        }
    }

    @Test func everyKindIsCaseSensitive() throws {
        for kind in PulseEventKind.allCases {
            #expect(try PulseEventKind(wireValue: kind.rawValue) == kind)
            #expect(throws: PulseProtocolError.self) { try PulseEventKind(wireValue: kind.rawValue.uppercased()) }
        }
        #expect(
            PulseEventKind.allCases.map(\.rawValue) == [
                "Analytics", "Crash", "Error", "Log", "Network", "Performance", "Runtime", "Breadcrumb",
            ])
    }

    @Test func emptyBatchesAreRejected() {
        let json =
            #"{"identity":"# + String(decoding: Samples.identity.encodeJSON(), as: UTF8.self)
            + #","events":[],"batchId":"b"}"#
        #expect(throws: PulseProtocolError.self) { try EventBatch(decodingJSON: utf8(json)) }
    }

    @Test func unknownKeysAreIgnoredAndDefaultsApply() throws {
        let json =
            #"{"v":9,"identity":{"projectId":"p","installationId":"i","deviceId":"d","sdkVersion":"s","#
            + #""platform":"android","packageName":"com.x","extra":[1,2]},"#
            + #""events":[{"id":"e","timestamp":5,"sessionId":"s","kind":"Log","name":"n","future":{"a":1}}],"#
            + #""batchId":"b","trailer":null}"#
        let batch = try EventBatch(decodingJSON: utf8(json))
        #expect(batch.identity.buildNumber == 0)
        #expect(batch.identity.userId == nil)
        #expect(batch.events[0].source == .unknown)
        #expect(batch.events[0].attributes == [])
        // Re-encoding writes every field, with explicit nulls.
        let encoded = String(decoding: batch.encodeJSON(), as: UTF8.self)
        #expect(encoded.contains(#""userId":null,"appVersion":null,"buildNumber":0"#))
        #expect(encoded.contains(#""source":{"module":null,"imageUuid":null},"attributes":{}"#))
    }

    @Test func attributesKeepOrderNumberKindsAndDuplicates() throws {
        let json =
            #"{"identity":{"projectId":"p","installationId":"i","deviceId":"d","userId":"u","appVersion":null,"#
            + #""buildNumber":1,"sdkVersion":"s","platform":"ios","packageName":"c"},"events":[{"id":"e","#
            + #""timestamp":1,"sessionId":"s","kind":"Performance","name":"n","source":{"module":"m","imageUuid":null},"#
            + #""attributes":{"z":1,"a":1.0,"big":18446744073709551615,"neg":-3,"e":1e-05,"z":2,"#
            + #""s":"\u00e9\n\"\\/","deep":{"x":[[],{}]}}}],"batchId":"b"}"#
        let batch = try EventBatch(decodingJSON: utf8(json))
        let attributes = batch.events[0].attributes
        #expect(attributes.map(\.key) == ["z", "a", "big", "neg", "e", "z", "s", "deep"])
        #expect(attributes[1].value == .double(1.0))
        #expect(attributes[2].value == .uint(UInt64.max))
        #expect(batch.events[0].attribute("z") == .int(1))
        #expect(attributes[6].value == .string("\u{e9}\n\"\\/"))
        // Canonical form differs from the input only in string escapes (é raw, / unescaped).
        let canonical = String(decoding: batch.encodeJSON(), as: UTF8.self)
        #expect(canonical.contains(#""s":"é\n\"\\/""#))
        #expect(canonical.contains(#""a":1.0,"big":18446744073709551615,"neg":-3,"e":1e-05,"z":2"#))
        #expect(try EventBatch(decodingJSON: batch.encodeJSON()) == batch)
    }

    @Test func errorsNameTheFieldPath() {
        let cases: [(String, PulseProtocolError.Code, String)] = [
            (#"[]"#, .typeMismatch, "$: expected an object"),
            (#"{"events":[]}"#, .missingField, "$.identity: required field is missing"),
            (
                #"{"identity":{"projectId":1},"events":[],"batchId":"b"}"#, .typeMismatch,
                "$.identity.projectId: expected a string"
            ),
            (#"{"identity":"#, .malformedJSON, "$: payload is not valid JSON"),
        ]
        expectRejections(cases) { _ = try EventBatch(decodingJSON: $0) }
        var batch = Self.smallJSON
        batch = batch.replacingOccurrences(of: #""timestamp":1764400000000"#, with: #""timestamp":"1764400000000""#)
        do {
            _ = try EventBatch(decodingJSON: utf8(batch))
            Issue.record("accepted a string timestamp")
        } catch {
            #expect(error.message == "$.events[0].timestamp: expected an integer")
        }
        let badSource = Self.smallJSON.replacingOccurrences(of: #""imageUuid":"U""#, with: #""imageUuid":7"#)
        do {
            _ = try EventBatch(decodingJSON: utf8(badSource))
            Issue.record("accepted a numeric imageUuid")
        } catch {
            #expect(error.message == "$.events[0].source.imageUuid: expected a string or null")
        }
    }

    @Test func errorDescriptionsCarryNoPayload() {
        let secret = "Bearer sk_live_SECRET"
        let json = Self.smallJSON.replacingOccurrences(of: #""path":"/v1/a""#, with: #""path":"\#(secret)""#)
            .replacingOccurrences(of: #""batchId":"b1""#, with: #""batchId":5"#)
        do {
            _ = try EventBatch(decodingJSON: utf8(json))
            Issue.record("accepted a numeric batchId")
        } catch {
            #expect(!error.description.contains("SECRET"))
            #expect(error.message == "$.batchId: expected a string")
        }
    }
}
