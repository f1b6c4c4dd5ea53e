import Foundation
import OTLPProtobuf
import PulseJSON
import PulseKit
import PulseTestSupport
import Testing

/// `decodeDocument` builds the very document `JSONParser` makes of `transcodeToJSON`'s output, so a
/// protobuf request maps exactly as its OTLP/JSON form does; and it fails exactly where
/// transcoding fails, with the same error.
@Suite struct DocumentDecodingTests {
    /// The document re-encoded: member order, kinds (`1` vs `1.0`, `-0.0`) and values all show.
    private func encoded(_ document: JSONDocument) -> [UInt8] { document.root.value.encoded() }

    /// Checks that both paths agree on `input`; returns whether it decoded.
    @discardableResult
    private func expectAgreement(
        _ input: [UInt8], _ signal: OTLPProtobufSignal, _ limits: OTLPProtobufLimits = OTLPProtobufLimits(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Bool {
        let text = Result { () throws(OTLPProtobufError) in
            try OTLPProtobuf.transcodeToJSON(input, signal: signal, limits: limits)
        }
        let document = Result { () throws(OTLPProtobufError) in
            try OTLPProtobuf.decodeDocument(input, signal: signal, limits: limits)
        }
        switch (text, document) {
        case (.success(let json), .success(let decoded)):
            let parsed = try? JSONParser(maxDepth: 64, bigIntegersAsDoubles: true).parse(json)
            #expect(parsed.map(encoded) == encoded(decoded), sourceLocation: sourceLocation)
            #expect(parsed?.nodeCount == decoded.nodeCount, sourceLocation: sourceLocation)
            #expect(
                encoded(decoded) == json, "the document re-encodes to the transcoder's text",
                sourceLocation: sourceLocation)
            return true
        case (.failure(let textError), .failure(let documentError)):
            #expect(textError.code == documentError.code, sourceLocation: sourceLocation)
            #expect(textError.message == documentError.message, sourceLocation: sourceLocation)
            #expect(textError.offset == documentError.offset, sourceLocation: sourceLocation)
        case (.success, .failure(let error)):
            Issue.record("only the document failed: \(error)", sourceLocation: sourceLocation)
        case (.failure(let error), .success):
            Issue.record("only the transcoding failed: \(error)", sourceLocation: sourceLocation)
        }
        return false
    }

    @Test func everyFixtureDecodesToTheParsedTranscoding() throws {
        let names = Fixtures.requestNames()
        #expect(names.count >= 10)
        for name in names {
            let signal = try #require(Fixtures.signal(of: name))
            #expect(expectAgreement(try Fixtures.bytes(name + ".pb"), signal), "\(name)")
        }
    }

    @Test func invalidFixturesFailWithTheTranscodersError() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.directory.path)
            .filter { $0.hasPrefix("invalid-") && $0.hasSuffix(".pb") }
        #expect(names.count >= 10)
        for name in names {
            for signal in OTLPProtobufSignal.allCases {
                expectAgreement(try Fixtures.bytes(name), signal)
            }
        }
    }

    @Test func everyPrefixAndEverySingleByteCorruptionAgree() throws {
        var decoded = 0
        for name in Fixtures.requestNames() {
            let signal = try #require(Fixtures.signal(of: name))
            let input = try Fixtures.bytes(name + ".pb")
            for end in 0..<input.count where expectAgreement(Array(input[..<end]), signal) { decoded += 1 }
            for index in input.indices {
                for replacement: UInt8 in [0x00, 0x7F, 0x80, 0xFF] {
                    var corrupted = input
                    corrupted[index] = replacement
                    if expectAgreement(corrupted, signal) { decoded += 1 }
                }
            }
        }
        // Both outcomes were exercised, not only failures.
        #expect(decoded > 100)
    }

    @Test func scalarKindsMatchWhatTheParserReads() throws {
        let record = Wire { record in
            record.fixed64Field(1, UInt64.max)  // fixed64: decimal string
            record.varintField(2, UInt64.max)  // enum -1: negative int
            record.fixed32Field(8, UInt32.max)  // fixed32: an int for the parser (fits Int64)
            for (key, value): (String, Double) in [
                ("nan", .nan), ("inf", .infinity), ("-inf", -.infinity), ("-zero", -0.0), ("one", 1),
                ("tiny", .leastNonzeroMagnitude),
            ] {
                record.field(6) { attribute in
                    attribute.field(1, key)
                    attribute.field(2) { $0.doubleField(4, value) }
                }
            }
            record.field(6) { attribute in
                attribute.field(1, "int")
                attribute.field(2) { $0.varintField(3, UInt64(bitPattern: -42)) }
            }
        }.bytes
        #expect(expectAgreement(logsRequest([record]), .logs))
        let document = try OTLPProtobuf.decodeDocument(logsRequest([record]), signal: .logs)
        let decoded = try #require(document.root["resourceLogs"]?[0]?["scopeLogs"]?[0]?["logRecords"]?[0])
        #expect(decoded["flags"]?.kind == .int)
        #expect(decoded["severityNumber"]?.int64 == -1)
        #expect(decoded["timeUnixNano"]?.string == String(UInt64.max))
        let one = try #require(decoded["attributes"]?[4]?["value"]?["doubleValue"])
        #expect(one.kind == .double && one.double == 1)
    }

    /// The document is first written in one pass, in wire order; these records leave that path
    /// (fields out of order, a singular field or a oneof repeated, a repeated field interrupted,
    /// a message merged) or keep to it (unknown fields, a known number with another wire type),
    /// and each must still give the two-pass path's document.
    @Test func recordsOutOfFieldOrderGiveTheSameDocument() throws {
        let attribute: (inout Wire) -> Void = { attribute in
            attribute.field(1, "k")
            attribute.field(2) { $0.field(1, "v") }
        }
        let records: [[UInt8]] = [
            Wire {
                $0.field(3, "text")
                $0.fixed64Field(1, 5)
            }.bytes,
            Wire {
                $0.field(3, "first")
                $0.field(3, "last")
            }.bytes,
            Wire {
                $0.field(6, attribute)
                $0.varintField(7, 2)
                $0.field(6, attribute)
            }.bytes,
            Wire {
                $0.field(5) {
                    $0.field(1, "text")
                    $0.varintField(2, 1)
                }
            }.bytes,
            Wire {
                $0.field(5) { $0.field(6) { _ in } }
                $0.field(5) { $0.field(6) { $0.field(1, attribute) } }
            }.bytes,
            Wire {
                $0.fixed64Field(1, 5)
                $0.field(2, "wrong wire type")
                $0.field(99, "unknown")
                $0.field(3, "t")
            }
            .bytes,
            Wire {
                $0.fixed64Field(1, 0)
                $0.varintField(2, 0)
                $0.field(3, "")
                $0.field(6, attribute)
            }.bytes,
        ]
        for record in records {
            #expect(expectAgreement(logsRequest([record]), .logs))
        }
        #expect(expectAgreement(logsRequest(records), .logs))

        // An invalid string met in wire order, before a later wire error in its record: the error
        // is the two-pass path's, which scans the record before writing its attributes.
        var invalid = Wire { record in
            record.field(6) { attribute in
                attribute.field(1, "k")
                attribute.field(2) { $0.field(1, [0xC0, 0x80]) }
            }
        }
        invalid.raw([0x1A, 0x05])  // field 3, five bytes promised, none given
        #expect(!expectAgreement(logsRequest([invalid.bytes]), .logs))
        let error = try #require(transcodingError(logsRequest([invalid.bytes]), .logs))
        #expect(error.code == .truncated)
    }

    @Test func theDocumentSizeIsBounded() throws {
        let (full, error) = try checkOutputBound {
            try OTLPProtobuf.decodeDocument($0, signal: .logs, limits: $1).byteCount
        }
        #expect(error?.message.contains("decoded document larger than \(full / 2) bytes") == true)
    }

    @Test func emptyRequestsAreEmptyObjects() throws {
        for signal in OTLPProtobufSignal.allCases {
            let document = try OTLPProtobuf.decodeDocument([], signal: signal)
            #expect(document.root.kind == .object && document.root.count == 0 && document.nodeCount == 1)
        }
    }
}
