import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import Testing

/// `EventBatchSummary` reads batches by exactly the rules of `EventBatch`: the same payloads are
/// accepted with the same fields, the same ones rejected with the same errors.
@Suite struct EventBatchSummaryTests {
    static let base = EventBatchCodecTests.smallJSON

    /// Valid and invalid variants of the small batch, and the sample batches.
    static var payloads: [String] {
        [
            base,
            String(decoding: Samples.eventBatch(count: 16).encodeJSON(), as: UTF8.self),
            base.replacingOccurrences(of: #""kind":"Network""#, with: #""kind":"network""#),
            base.replacingOccurrences(of: #""timestamp":1764400000000"#, with: #""timestamp":"1"#),
            base.replacingOccurrences(of: #""timestamp":1764400000000"#, with: #""timestamp":1.5"#),
            base.replacingOccurrences(of: #""imageUuid":"U""#, with: #""imageUuid":7"#),
            base.replacingOccurrences(of: #""source":{"module":null,"imageUuid":"U"}"#, with: #""source":null"#),
            base.replacingOccurrences(of: #""source":{"module":null,"imageUuid":"U"}"#, with: #""source":[]"#),
            base.replacingOccurrences(
                of: #","attributes":{"status":200,"ok":true,"path":"/v1/a","lat":12.5,"x":null}"#, with: ""),
            base.replacingOccurrences(of: #""attributes":{"status""#, with: #""attributes":null,"a":{"status""#),
            base.replacingOccurrences(
                of: #""attributes":{"status":200,"ok":true,"path":"/v1/a","lat":12.5,"x":null}"#,
                with: #""attributes":[1]"#),
            base.replacingOccurrences(
                of: #""attributes":{"status":200,"ok":true,"path":"/v1/a","lat":12.5,"x":null}"#,
                with: #""attributes":"x""#),
            base.replacingOccurrences(of: #""sessionId":"s1","#, with: ""),
            base.replacingOccurrences(of: #""name":"http","#, with: #""name":null,"#),
            base.replacingOccurrences(of: #""id":"0123456789abcdef0123456789abcdef""#, with: #""id":5"#),
            base.replacingOccurrences(of: #""batchId":"b1""#, with: #""batchId":5"#),
            base.replacingOccurrences(of: #""userId":null"#, with: #""userId":3"#),
            #"{"identity":\#(String(decoding: Samples.identity.encodeJSON(), as: UTF8.self)),"events":[],"batchId":"b"}"#,
            #"{"identity":\#(String(decoding: Samples.identity.encodeJSON(), as: UTF8.self)),"events":{},"batchId":"b"}"#,
            #"{"identity":\#(String(decoding: Samples.identity.encodeJSON(), as: UTF8.self)),"events":[7],"batchId":"b"}"#,
            #"[]"#, #"{"identity":"#, "",
        ]
    }

    @Test func acceptsAndRejectsExactlyWhatEventBatchDoes() throws {
        let parser = JSONParser()
        for json in Self.payloads {
            let bytes = Array(json.utf8)
            let full = Result { () throws(PulseProtocolError) in try EventBatch(decodingJSON: bytes) }
            let summary = Result { () throws(PulseProtocolError) in
                try EventBatchSummary(decodingJSON: bytes, parser: parser)
            }
            switch (full, summary) {
            case (.success(let batch), .success(let reduced)):
                #expect(reduced.identity == batch.identity)
                #expect(reduced.batchId == batch.batchId)
                #expect(reduced.events.count == batch.events.count)
                for (event, summary) in zip(batch.events, reduced.events) {
                    #expect(summary.id == event.id)
                    #expect(summary.timestamp == event.timestamp)
                    #expect(summary.sessionId == event.sessionId)
                    #expect(summary.kind == event.kind)
                    #expect(summary.name == event.name)
                    #expect(summary.source == event.source)
                }
            case (.failure(let expected), .failure(let error)):
                #expect(error.code == expected.code, "\(json)")
                #expect(error.message == expected.message, "\(json)")
            default:
                Issue.record("EventBatch and EventBatchSummary disagree on \(json)")
            }
        }
    }

    /// The crash id is the first `app.crash.id` attribute when it is a string, as
    /// `PulseEvent.attribute(_:)` gives it.
    @Test func crashIdIsTheFirstStringAppCrashIdAttribute() throws {
        let cases: [(String, String?)] = [
            (#"{"app.crash.id":"c-1","other":1}"#, "c-1"),
            (#"{"x":1,"app.crash.id":"c-2","app.crash.id":"c-3"}"#, "c-2"),
            (#"{"app.crash.id":7,"app.crash.id":"c-4"}"#, nil),
            (#"{"app.crash":"c-5"}"#, nil),
            (#"{}"#, nil),
        ]
        for (attributes, expected) in cases {
            let json =
                #"{"id":"e","timestamp":1,"sessionId":"s","kind":"Crash","name":"n","attributes":\#(attributes)}"#
            let node = try JSONParser().parse(Array(json.utf8)).root
            let summary = try PulseEventSummary(jsonNode: node)
            let event = try PulseEvent(jsonNode: node)
            #expect(summary.crashIdAttribute == expected, "\(attributes)")
            if case .string(let id)? = event.attribute("app.crash.id") {
                #expect(summary.crashIdAttribute == id)
            } else {
                #expect(summary.crashIdAttribute == nil)
            }
        }
    }
}
