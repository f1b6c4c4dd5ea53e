import PulseJSON
import PulseKit
import PulseProtocol
import Testing

/// The member rules the table-driven decoders share (required, nullable, defaulted; the value
/// kinds and how their errors name the member), pinned across several payload types.
@Suite struct WireTableRuleTests {
    /// The required members of a `CLIENT_CONNECT` request but `appId` (a repeated key reads as its
    /// first occurrence, so a case that varies `appId` starts from this).
    static let connectWithoutAppId =
        #""protocolVersion":2,"deviceId":"d","installationId":"i","platform":"ios","deviceType":"phone","#
        + #""sdkVersion":"1.0""#
    static let connect = connectWithoutAppId + #","appId":"a""#

    static func failure<T: PulseJSONCodable>(_ type: T.Type, _ json: String) -> PulseProtocolError? {
        do {
            _ = try T(decodingJSON: utf8(json))
            return nil
        } catch {
            return error
        }
    }

    @Test func wrongKindsNameTheMemberAndWhatItMayHold() {
        let cases: [(String, PulseProtocolErrorCode, String)] = [
            ("{\(Self.connect),\"packageName\":5}", .typeMismatch, "$.packageName: expected a string or null"),
            ("{\(Self.connectWithoutAppId),\"appId\":5}", .typeMismatch, "$.appId: expected a string"),
            ("{\(Self.connect),\"buildNumber\":\"7\"}", .typeMismatch, "$.buildNumber: expected an integer"),
            ("{\(Self.connect),\"buildNumber\":1.5}", .typeMismatch, "$.buildNumber: expected an integer"),
            ("{\(Self.connect),\"capabilities\":\"zstd\"}", .typeMismatch, "$.capabilities: expected an array"),
            ("{\(Self.connect),\"capabilities\":[\"a\",1]}", .typeMismatch, "$.capabilities[1]: expected a string"),
            (#"{"protocolVersion":2}"#, .missingField, "$.appId: required field is missing"),
            ("{\(Self.connectWithoutAppId),\"appId\":null}", .missingField, "$.appId: required field is missing"),
        ]
        for (json, code, message) in cases {
            let error = Self.failure(ConnectRequest.self, json)
            #expect(error?.code == code, "\(json)")
            #expect(error?.message == message, "\(json)")
        }
    }

    @Test func snapshotMembersKeepTheirOwnMessages() {
        let cases: [(String, PulseProtocolErrorCode, String)] = [
            (#"{"revision":1,"killSwitch":"yes"}"#, .typeMismatch, "$.killSwitch: expected a boolean"),
            (#"{"revision":1,"compression":"lz4"}"#, .invalidValue, #"$.compression: unknown codec "lz4""#),
            (#"{"revision":1,"compression":3}"#, .typeMismatch, "$.compression: expected a string or null"),
            (#"{"revision":1,"sampling":[]}"#, .typeMismatch, "$.sampling: expected an object"),
            (#"{"revision":1,"sampling":{"Log":"all"}}"#, .typeMismatch, "$.sampling.Log: expected a number"),
            (
                #"{"revision":1,"endpoints":[{"name":"x","url":1}]}"#, .typeMismatch,
                "$.endpoints[0].url: expected a string"
            ),
            (#"{"revision":1,"endpoints":[7]}"#, .typeMismatch, "$.endpoints[0]: expected an object"),
            (#"{"killSwitch":true}"#, .missingField, "$.revision: required field is missing"),
        ]
        for (json, code, message) in cases {
            let error = Self.failure(ConfigSnapshot.self, json)
            #expect(error?.code == code, "\(json)")
            #expect(error?.message == message, "\(json)")
        }
    }

    @Test func absentAndNullMembersReadAsTheInitialisersDefaults() throws {
        let json = "{\(Self.connect),\"packageName\":null,\"buildNumber\":null,\"capabilities\":null}"
        let request = try ConnectRequest(decodingJSON: utf8(json))
        #expect(request.packageName == nil)
        #expect(request.buildNumber == 0)
        #expect(request.capabilities == [])
        let result = try HeartbeatResult(decodingJSON: utf8(#"{"accepted":true,"serverTimeMs":5,"collectKinds":null}"#))
        #expect(result == HeartbeatResult(serverTimeMs: 5))
        let update = try UpdateCheckResult(decodingJSON: utf8(#"{"action":null,"latestBuildNumber":null}"#))
        #expect(update == .noUpdate)
        #expect(try CrashFrame(decodingJSON: utf8("{}")) == CrashFrame())
    }

    @Test func nullableMembersAreWrittenAsNullAndKeepTheTableOrder() {
        let build = CrashBuild(appVersion: nil, buildNumber: 3, imageUuids: ["u1"])
        #expect(
            fastJSON(build)
                == #"{"appVersion":null,"buildNumber":3,"imageUuids":["u1"],"osVersion":null,"architecture":null}"#)
        #expect(
            fastJSON(CrashFrame(imageOffset: 16, line: 9))
                == #"{"module":null,"imageUuid":null,"address":null,"imageOffset":16,"symbol":null,"file":null,"line":9}"#
        )
    }

    @Test func checksOfTheWholeValueRunAfterTheMembers() {
        let attachment = #"{"name":"a","contentType":"t","byteCount":-1,"sha256":""}"#
        let error = Self.failure(CrashAttachment.self, attachment)
        #expect(error?.code == .invalidValue)
        #expect(error?.message == "$.byteCount: must not be negative")
    }

    /// The codec members the tables provide are called on the concrete types, as before the
    /// tables (source compatibility of the library product).
    @Test func theCodecMembersStayCallableOnTheConcreteTypes() throws {
        let request = ConnectRequest(
            appId: "a", deviceId: "d", installationId: "i", platform: "ios", deviceType: "phone", packageName: nil,
            appVersion: "1.0", sdkVersion: "2.0")
        var writer = JSONWriter()
        request.writeJSON(to: &writer)
        let decode: (JSONNode) throws(PulseProtocolError) -> ConnectRequest = ConnectRequest.init(jsonNode:)
        let document = try JSONParser().parse(writer.bytes)
        #expect(try decode(document.root) == request)
        #expect(try ConnectRequest(jsonNode: document.root) == request)
        let codec = try codableJSON(PayloadCodec.zlib)
        #expect(codec == #""zlib""#)
    }
}
