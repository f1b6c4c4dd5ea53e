import PulseKit
import Testing

@testable import PulseUploader

@Suite struct RecordLineDecoderTests {
    let decoder = RecordLineDecoder()

    func decode(_ line: String, _ number: Int = 1) throws -> TelemetryRecord {
        try decoder.decode(Array(line.utf8), lineNumber: number)
    }

    func failure(_ line: String, _ number: Int = 1) -> String? {
        do {
            _ = try decode(line, number)
            return nil
        } catch {
            return (error as? UploaderError)?.message
        }
    }

    @Test func decodesEveryType() throws {
        guard
            case .event(let event) = try decode(
                #"{"type":"event","name":"launch","attributes":{"cold":true,"n":3,"tags":["a"],"m":{"k":1.5}},"timestamp":1700000000123}"#
            )
        else {
            Issue.record("not an event")
            return
        }
        #expect(event.name == "launch")
        #expect(event.timeUnixNano == 1_700_000_000_123_000_000)
        #expect(event.attributes["cold"] == .bool(true))
        #expect(event.attributes["n"] == .int(3))
        #expect(event.attributes["tags"] == .array([.string("a")]))
        #expect(event.attributes["m"] == .map(["k": .double(1.5)]))

        guard case .log(let log) = try decode(#"{"type":"log","body":"hi","severity":"error","sessionId":"s"}"#) else {
            Issue.record("not a log")
            return
        }
        #expect(log.severity == .error)
        #expect(log.sessionId == "s")
        guard case .log(let numeric) = try decode(#"{"type":"log","body":"hi","severity":14}"#) else { return }
        #expect(numeric.severity == .warn)

        guard
            case .crash(let crash) = try decode(
                ##"{"type":"crash","crashId":"c1","message":"boom","stack":"#0","timestamp":"2023-11-14T22:13:20Z"}"##)
        else { return }
        #expect(crash.crashId == "c1")
        #expect(crash.stack == "#0")
        #expect(crash.timeUnixNano == 1_700_000_000_000_000_000)

        guard
            case .span(let span) = try decode(
                #"{"type":"span","name":"GET","kind":"client","start":1000,"end":1500.5,"status":"ok"}"#)
        else { return }
        #expect(span.kind == .client)
        #expect(span.startTimeUnixNano == 1_000_000_000)
        #expect(span.endTimeUnixNano == 1_500_500_000)
        #expect(span.status == .ok)

        guard
            case .metric(let metric) = try decode(
                #"{"type":"metric","name":"hits","value":3,"kind":"sum","temporality":"delta","monotonic":false}"#)
        else { return }
        #expect(metric.value == .int(3))
        #expect(metric.kind == .sum(monotonic: false, temporality: .delta))

        guard case .exit(let exit) = try decode(#"{"type":"exit","reason":"oom","code":9}"#) else { return }
        #expect(exit.code == 9)
        guard
            case .sessionSummary(let summary) = try decode(
                #"{"type":"session_summary","sessionId":"s","durationMs":10}"#)
        else { return }
        #expect(summary.durationMilliseconds == 10)
        guard case .attachment(let attachment) = try decode(#"{"type":"attachment","path":"/tmp/x","name":"x"}"#)
        else { return }
        #expect(attachment.path == "/tmp/x")
    }

    @Test func rejectsBadLinesNamingTheLineAndTheField() {
        #expect(failure("not json", 4)?.hasPrefix("line 4: not valid JSON") == true)
        #expect(failure("[1]", 2) == "line 2: expected a JSON object")
        #expect(failure(#"{"name":"x"}"#) == "line 1: missing string field `type`")
        #expect(failure(#"{"type":"nope"}"#)?.contains("unknown type `nope`") == true)
        #expect(failure(#"{"type":"event"}"#, 9) == "line 9: missing string field `name`")
        #expect(
            failure(#"{"type":"event","name":"x","colour":"red"}"#) == "line 1: unknown field `colour` for type `event`"
        )
        #expect(failure(#"{"type":"event","name":""}"#) == "line 1: `name` must not be empty")
        #expect(failure(#"{"type":"log","body":3}"#) == "line 1: `body` must be a string")
        #expect(failure(#"{"type":"log","body":"x","severity":"loud"}"#)?.contains("`severity`") == true)
        #expect(failure(#"{"type":"event","name":"x","timestamp":"yesterday"}"#)?.contains("RFC 3339") == true)
        #expect(failure(#"{"type":"event","name":"x","timestamp":-1}"#)?.contains("out of range") == true)
        #expect(failure(#"{"type":"event","name":"x","attributes":{"a":null}}"#)?.contains("must not be null") == true)
        #expect(failure(#"{"type":"metric","name":"m"}"#) == "line 1: missing number field `value`")
        #expect(failure(#"{"type":"metric","name":"m","value":1,"monotonic":true}"#)?.contains("sums only") == true)
        #expect(failure(#"{"type":"session_summary"}"#) == "line 1: missing string field `sessionId`")
        #expect(failure(#"{"type":"exit","reason":"x","code":"9"}"#) == "line 1: `code` must be an integer")
        #expect(failure(#"{"type":"event","name":"x","name":"y"}"#) == "line 1: duplicate field `name`")
    }
}
