import Foundation
import OTLPProtobuf
import PulseJSON
import PulseKit
import Testing

/// Compares the transcoder with the official protobuf library, through the checked-in fixtures.
@Suite struct FixtureTests {
    @Test func fixturesArePresent() {
        let names = Fixtures.requestNames()
        #expect(names.count >= 18)
        for signal in OTLPProtobufSignal.allCases {
            #expect(names.contains { $0.hasPrefix(signal.rawValue + "-") })
        }
        for type in ["gauge", "sum", "histogram", "exponential-histogram", "summary"] {
            #expect(names.contains("metrics-\(type)"))
        }
    }

    @Test(arguments: Fixtures.requestNames())
    func transcodesLikeTheOfficialLibrary(_ name: String) throws {
        let signal = try #require(Fixtures.signal(of: name))
        let input = try Fixtures.bytes(name + ".pb")
        let output = try OTLPProtobuf.transcodeToJSON(input, signal: signal)
        let expected = try parseJSON(Fixtures.bytes(name + ".json"))
        let actual = try parseJSON(output)
        #expect(
            normalized(actual) == normalized(expected),
            "\(name): got \(String(decoding: normalized(actual).encoded(), as: UTF8.self))")
    }

    @Test(arguments: Fixtures.requestNames())
    func outputIsCompactJSONWithinTheGatewayDepth(_ name: String) throws {
        let signal = try #require(Fixtures.signal(of: name))
        let output = try OTLPProtobuf.transcodeToJSON(try Fixtures.bytes(name + ".pb"), signal: signal)
        // Compact: re-encoding the parsed value gives the same bytes (no whitespace, no escapes
        // the writer would not produce).
        let document = try JSONParser(maxDepth: 64).parse(output)
        #expect(document.root.kind == .object)
        #expect(document.root.value.encoded() == output)
    }

    struct InvalidCase: Decodable, CustomTestStringConvertible {
        var file: String
        var signal: String
        var code: String
        var path: String
        var officialParserRejects: Bool
        var testDescription: String { file }
    }

    static let invalidCases: [InvalidCase] = Fixtures.manifest("invalid.json")

    @Test func invalidManifestIsPresent() {
        #expect(Self.invalidCases.count >= 15)
    }

    @Test(arguments: invalidCases)
    func rejectsMalformedRequests(_ invalid: InvalidCase) throws {
        let signal = try #require(OTLPProtobufSignal(rawValue: invalid.signal))
        let input = try Fixtures.bytes(invalid.file)
        let error = try #require(transcodingError(input, signal))
        #expect(error.code.rawValue == invalid.code)
        #expect(error.path == invalid.path)
        #expect(error.message.hasPrefix(invalid.path.isEmpty ? "Export" : invalid.path + ": "))
        let offset = try #require(error.offset)
        #expect(offset >= 0 && offset <= input.count)
    }

    @Test func errorMessageNamesTheFieldPath() throws {
        let error = try #require(transcodingError(try Fixtures.bytes("invalid-truncated-body.pb"), .logs))
        #expect(
            error.message
                == "resourceLogs[0].scopeLogs[1].logRecords[3].body: truncated length-delimited field")
        #expect(error.description.hasPrefix("OTLPProtobufError.truncated: resourceLogs[0]"))
    }

    struct ResponseCase: Decodable, CustomTestStringConvertible {
        var kind: String
        var signal: String?
        var rejected: String?
        var errorMessage: String?
        var code: Int32?
        var message: String?
        var hex: String
        var testDescription: String {
            kind == "status"
                ? "Status(\(code ?? 0), \(message ?? ""))"
                : "\(signal ?? "") rejected=\(rejected ?? "") message=\(errorMessage ?? "")"
        }
    }

    static let responseCases: [ResponseCase] = Fixtures.manifest("responses.json")

    @Test func responseManifestIsPresent() {
        #expect(Self.responseCases.count == 23)
    }

    @Test(arguments: responseCases)
    func encodesResponsesLikeTheOfficialLibrary(_ response: ResponseCase) throws {
        let bytes: [UInt8]
        if response.kind == "status" {
            bytes = OTLPProtobuf.encodeStatus(code: try #require(response.code), message: response.message ?? "")
        } else {
            let signal = try #require(response.signal.flatMap(OTLPProtobufSignal.init(rawValue:)))
            let rejected = try #require(response.rejected.flatMap { Int64($0) })
            bytes = OTLPProtobuf.encodeResponse(
                signal: signal, rejected: rejected, errorMessage: response.errorMessage ?? "")
        }
        #expect(hex(bytes) == response.hex)
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }
}
