import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import Testing

@Suite struct FastCodecRoundTripTests {
    /// Fast encode -> fast decode == model, and the re-encoding is byte-identical.
    func check<T: PulseJSONCodable & Equatable>(_ value: T) throws {
        let bytes = value.encodeJSON()
        let decoded = try T(decodingJSON: bytes)
        #expect(decoded == value, "\(T.self)")
        #expect(decoded.encodeJSON() == bytes, "\(T.self)")
    }

    @Test func everySessionModelRoundTrips() throws {
        try check(Samples.connectRequest)
        try check(Samples.connectResult)
        try check(Samples.heartbeatRequest)
        try check(Samples.heartbeatResult)
        try check(Samples.configPullRequest)
        try check(Samples.configSnapshot)
        try check(ConfigSnapshot(revision: 1))
        try check(Samples.updateCheckRequest)
        try check(Samples.updateCheckResult)
        try check(UpdateCheckResult.noUpdate)
        try check(Samples.controlRequest)
        try check(
            ControlRPCRequest(
                route: try ControlRoute(validating: "audit.permission_calls"),
                args: [JSONMember(key: "sinceMs", value: .int(1_000))], schemaVersion: 2))
        try check(Samples.identity)
        try check(Samples.event(3))
        try check(Samples.crash(1))
    }

    @Test func everyEnvelopeRoundTrips() throws {
        try check(PulseEnvelope.ok(Samples.connectResult))
        try check(PulseEnvelope<ConnectResult>.failure(.forbidden, "package com.x is not allowed for app_7f3a"))
        try check(PulseEnvelope.ok(Samples.heartbeatResult))
        try check(PulseEnvelope.ok(Samples.configSnapshot))
        try check(
            PulseEnvelope<ConfigSnapshot>.failure(.conflict, "client revision 13 is newer than server revision 12"))
        try check(PulseEnvelope<Bool>.accepted)
        try check(PulseEnvelope<Bool>.failure(.tooManyRequests, "ingest queue full"))
        try check(UpdateCheckResponse(envelope: .ok(Samples.updateCheckResult)))
        try check(PulseEnvelope.ok(ControlRPCResult(Samples.controlResult)))
        try check(PulseEnvelope<ControlRPCResult>.failure(.notFound, "unsupported control route config.nope"))
    }

    @Test func ackIsExactly33Bytes() throws {
        let bytes = PulseEnvelope<Bool>.accepted.encodeJSON()
        #expect(bytes == utf8(#"{"code":0,"msg":null,"data":true}"#))
        #expect(bytes.count == 33)
        #expect(try PulseEnvelope<Bool>(decodingJSON: bytes).confirmsAcceptance)
    }

    @Test func envelopeDecodingRules() throws {
        #expect(try PulseEnvelope<Bool>(decodingJSON: utf8(#"{"data":true}"#)) == .accepted)
        let unknown = try PulseEnvelope<Bool>(decodingJSON: utf8(#"{"code":299,"msg":"new","data":{"x":1}}"#))
        #expect(unknown.code == 299)
        #expect(unknown.knownCode == nil)
        #expect(unknown.data == nil)
        #expect(unknown.encodeJSON() == utf8(#"{"code":299,"msg":"new","data":null}"#))
        do {
            _ = try PulseEnvelope<Bool>(decodingJSON: utf8(#"{"code":0,"msg":null,"data":"yes"}"#))
            Issue.record("accepted a string ack")
        } catch {
            #expect(error.message == "$.data: expected a boolean")
        }
        #expect(
            PulseEnvelope<Bool>.failure(.notImplemented, "CLIENT_CONFIG_PULL is not implemented").encodeJSON()
                == utf8(#"{"code":501,"msg":"CLIENT_CONFIG_PULL is not implemented","data":null}"#))
    }

    @Test func updateCheckRootCopyInTheCanonicalEncoding() throws {
        let response = UpdateCheckResponse(envelope: .ok(UpdateCheckResult(action: .forced, latestBuildNumber: 250)))
        let expected =
            #"{"code":0,"msg":null,"data":{"action":"forced","latestVersionName":null,"latestBuildNumber":250,"#
            + #""releaseNotes":null,"downloadUrl":null},"action":"forced","latestVersionName":null,"#
            + #""latestBuildNumber":250,"releaseNotes":null,"downloadUrl":null}"#
        #expect(response.encodeJSON() == utf8(expected))
        let decoded = try UpdateCheckResponse(decodingJSON: utf8(expected))
        #expect(decoded.rootCopy == response.envelope.data)
        #expect(decoded.decision.action == .forced)
        // A legacy-only server (root copy, data null) still fails open for new code.
        let legacy = try UpdateCheckResponse(decodingJSON: utf8(#"{"code":0,"action":"forced","latestBuildNumber":9}"#))
        #expect(legacy.rootCopy?.action == .forced)
        #expect(legacy.decision == .noUpdate)
        #expect(
            UpdateCheckResponse(envelope: .failure(.internalError, "db down")).encodeJSON()
                == utf8(#"{"code":500,"msg":"db down","data":null}"#))
    }

    @Test func controlRequestValidation() throws {
        #expect(
            Samples.controlRequest.encodeJSON() == utf8(#"{"route":"telemetry.flush","args":{},"schemaVersion":1}"#))
        let minimal = try ControlRPCRequest(decodingJSON: utf8(#"{"route":"config.reload"}"#))
        #expect(minimal.args == [])
        #expect(minimal.schemaVersion == 1)
        let cases: [(String, PulseProtocolError.Code, String)] = [
            (
                #"{"route":"Config.Reload"}"#, .invalidValue,
                "$.route: \"Config.Reload\" is not a lower-case dotted name"
            ),
            (#"{"route":"config.reload","args":[1]}"#, .typeMismatch, "$.args: expected an object"),
            (#"{"args":{}}"#, .missingField, "$.route: required field is missing"),
        ]
        expectRejections(cases) { _ = try ControlRPCRequest(decodingJSON: $0) }
    }

    @Test func configSnapshotFastDecodeValidates() throws {
        let cases: [(String, String)] = [
            (#"{"revision":1,"sampling":{"Log":2}}"#, "$.sampling.Log: must be within 0...1"),
            (#"{"revision":1,"sampling":{"Logs":0.5}}"#, "$.sampling: unknown event kind"),
            (#"{"revision":1,"diagnosticsLevel":"all"}"#, "$.diagnosticsLevel: unknown level \"all\""),
            (#"{"revision":1,"endpoints":[{"name":"ingest"}]}"#, "$.endpoints[0].url: required field is missing"),
            (#"{"revision":1,"collectKinds":["Crash","Oops"]}"#, "$.collectKinds[1]: unknown event kind \"Oops\""),
        ]
        for (json, prefix) in cases {
            do {
                _ = try ConfigSnapshot(decodingJSON: utf8(json))
                Issue.record("accepted \(json)")
            } catch {
                #expect(error.message.hasPrefix(prefix), "\(error.message)")
            }
        }
        // Integral sampling rates are accepted as numbers and re-encoded as doubles.
        let snapshot = try ConfigSnapshot(decodingJSON: utf8(#"{"revision":1,"sampling":{"Log":0,"Crash":1}}"#))
        #expect(snapshot.sampling == [.log: 0, .crash: 1])
        #expect(String(decoding: snapshot.encodeJSON(), as: UTF8.self).contains(#""sampling":{"Crash":1.0,"Log":0.0}"#))
    }
}
