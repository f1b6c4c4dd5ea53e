import OTLPProtobuf
import PulseJSON
import PulseKit
import PulseTestSupport
import Testing

/// Wire-level behaviour through the public API: unknown fields, wire types, varints, lengths,
/// packed encodings.
@Suite struct WireFormatTests {
    /// One unknown field of each wire type, plus the largest field number.
    private static func unknownFields(_ wire: inout Wire, from number: UInt32) {
        wire.varintField(number, 150)
        wire.fixed64Field(number + 1, 0x0102_0304_0506_0708)
        wire.field(number + 2, [0x08, 0x96, 0x01, 0xFF, 0xFF])
        wire.fixed32Field(number + 3, 0xDEAD_BEEF)
        wire.varintField((1 << 29) - 1, UInt64.max)
    }

    private static func record(withUnknowns: Bool) -> [UInt8] {
        Wire { record in
            if withUnknowns { unknownFields(&record, from: 20) }
            record.fixed64Field(1, 1_700_000_000_000_000_000)
            record.field(5) { body in
                if withUnknowns { unknownFields(&body, from: 30) }
                body.field(1, "hello")
            }
            record.field(6) { attribute in
                attribute.field(1, "k")
                if withUnknowns { unknownFields(&attribute, from: 40) }
                attribute.field(2) { $0.varintField(3, 7) }
            }
            if withUnknowns { unknownFields(&record, from: 50) }
        }.bytes
    }

    @Test func unknownFieldsOfEveryWireTypeAreSkipped() throws {
        var withUnknowns = Wire()
        Self.unknownFields(&withUnknowns, from: 2)
        withUnknowns.raw(logsRequest([Self.record(withUnknowns: true)]))
        Self.unknownFields(&withUnknowns, from: 60)
        let expected = try OTLPProtobuf.transcodeToJSON(logsRequest([Self.record(withUnknowns: false)]), signal: .logs)
        let actual = try OTLPProtobuf.transcodeToJSON(withUnknowns.bytes, signal: .logs)
        #expect(actual == expected)
        #expect(
            String(decoding: expected, as: UTF8.self)
                == #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1700000000000000000","#
                + #""body":{"stringValue":"hello"},"attributes":[{"key":"k","value":{"intValue":"7"}}]}]}]}]}"#)
    }

    @Test func knownFieldsWithAnUnexpectedWireTypeAreSkipped() throws {
        let record = Wire { record in
            record.varintField(1, 5)  // timeUnixNano is fixed64
            record.fixed32Field(3, 1)  // severityText is a string
            record.field(2, [0x01])  // severityNumber is a varint (enums are not packable as singular)
            record.varintField(5, 1)  // body is a message
            record.fixed64Field(8, 1)  // flags is fixed32
            record.varintField(9, 1)  // traceId is bytes
        }.bytes
        let json = try OTLPProtobuf.transcodeToJSON(logsRequest([record]), signal: .logs)
        #expect(try firstLogRecord(json) == .object([]))
    }

    @Test func packedAndUnpackedRepeatedFieldsAreEquivalent() throws {
        func histogram(_ point: [UInt8]) -> [UInt8] {
            Wire { request in
                request.field(1) { resourceMetrics in
                    resourceMetrics.field(2) { scopeMetrics in
                        scopeMetrics.field(2) { metric in
                            metric.field(1, "h")
                            metric.field(9) { $0.field(1, point) }
                        }
                    }
                }
            }.bytes
        }
        func bucketsPacked(_ counts: [UInt64]) -> [UInt8] {
            var packed = Wire()
            for count in counts {
                for shift in stride(from: 0, to: 64, by: 8) {
                    packed.bytes.append(UInt8(truncatingIfNeeded: count >> UInt64(shift)))
                }
            }
            return packed.bytes
        }
        let counts: [UInt64] = [1, 0, 300, UInt64.max]
        let bounds: [Double] = [0.5, -1, 1e300]
        let packed = Wire { point in
            point.field(6, bucketsPacked(counts))
            var packedBounds = Wire()
            for bound in bounds {
                for shift in stride(from: 0, to: 64, by: 8) {
                    packedBounds.bytes.append(UInt8(truncatingIfNeeded: bound.bitPattern >> UInt64(shift)))
                }
            }
            point.field(7, packedBounds.bytes)
        }.bytes
        let unpacked = Wire { point in
            for count in counts { point.fixed64Field(6, count) }
            for bound in bounds { point.doubleField(7, bound) }
        }.bytes
        let mixed = Wire { point in
            point.fixed64Field(6, counts[0])
            point.doubleField(7, bounds[0])
            point.field(6, bucketsPacked(Array(counts[1...2])))
            point.field(7, [])
            point.fixed64Field(6, counts[3])
            point.doubleField(7, bounds[1])
            point.doubleField(7, bounds[2])
        }.bytes
        let expected = try OTLPProtobuf.transcodeToJSON(histogram(packed), signal: .metrics)
        #expect(try OTLPProtobuf.transcodeToJSON(histogram(unpacked), signal: .metrics) == expected)
        #expect(try OTLPProtobuf.transcodeToJSON(histogram(mixed), signal: .metrics) == expected)
        let text = String(decoding: expected, as: UTF8.self)
        #expect(text.contains(#""bucketCounts":["1","0","300","18446744073709551615"]"#))
        #expect(text.contains(#""explicitBounds":[0.5,-1.0,1e+300]"#))
    }

    @Test func varintBoundaries() throws {
        /// A logs request whose one record's body is an `int_value` with `encoded` as its varint bytes.
        func intValueRequest(_ encoded: [UInt8]) -> [UInt8] {
            let record = Wire { record in
                record.field(5) { body in
                    body.tag(3, 0)
                    body.raw(encoded)
                }
            }.bytes
            return logsRequest([record])
        }
        func intValue(_ encoded: [UInt8]) throws(OTLPProtobufError) -> [UInt8] {
            try OTLPProtobuf.transcodeToJSON(intValueRequest(encoded), signal: .logs)
        }
        // The largest value: ten bytes, the last holding bit 63.
        let max = try intValue([UInt8](repeating: 0xFF, count: 9) + [0x01])
        #expect(try firstLogRecord(max)["body"] == .object([JSONMember(key: "intValue", value: .string("-1"))]))
        // Zero padded to ten bytes.
        let zero = try intValue([UInt8](repeating: 0x80, count: 9) + [0x00])
        #expect(try firstLogRecord(zero)["body"] == .object([JSONMember(key: "intValue", value: .string("0"))]))

        let tooLong = transcodingError(intValueRequest([UInt8](repeating: 0x80, count: 10) + [0]), .logs)
        #expect(tooLong?.code == .varintOverflow)
        #expect(
            tooLong?.message == "resourceLogs[0].scopeLogs[0].logRecords[0].body.intValue: varint longer than 10 bytes")

        let overflow = transcodingError(intValueRequest([UInt8](repeating: 0xFF, count: 9) + [0x02]), .logs)
        #expect(overflow?.code == .varintOverflow)
        #expect(overflow?.message.hasSuffix("body.intValue: varint overflows 64 bits") == true)

        let truncated = transcodingError(
            logsRequest([
                Wire {
                    $0.field(5) {
                        $0.tag(3, 0)
                        $0.raw([0x80, 0x80])
                    }
                }.bytes
            ]), .logs)
        #expect(truncated?.code == .truncated)
        #expect(truncated?.message.hasSuffix("body.intValue: truncated varint") == true)
    }

    @Test func lengthsBeyondTheEnclosingMessageAreRejected() throws {
        // A length past the end of the input.
        let pastEnd = transcodingError([0x0A, 0x05, 0x00], .traces)
        #expect(pastEnd?.code == .truncated)
        #expect(pastEnd?.message == "resourceSpans[0]: truncated length-delimited field")
        #expect(pastEnd?.offset == 1)
        // A length that fits the input but not the enclosing message.
        let inner = Wire { request in
            request.field(1, [0x12, 0x04, 0x0A, 0x00])  // scopeSpans claims 4 bytes, 2 remain
            request.field(1, [0x00, 0x00, 0x00, 0x00])
        }.bytes
        let pastParent = transcodingError(inner, .traces)
        #expect(pastParent?.code == .truncated)
        #expect(pastParent?.path == "resourceSpans[0].scopeSpans[0]")
        // Enormous lengths.
        for length in [UInt64(Int.max), UInt64.max, UInt64(UInt32.max) + 1] {
            var wire = Wire()
            wire.tag(1, 2)
            wire.varint(length)
            wire.raw([0, 0, 0])
            #expect(transcodingError(wire.bytes, .metrics)?.code == .truncated)
        }
    }

    @Test func invalidWireTypesAndGroupsAreRejected() throws {
        for wireType: UInt8 in [3, 4, 6, 7] {
            let record = Wire {
                $0.tag(14, wireType)
                $0.raw([0, 0, 0, 0, 0, 0, 0, 0])
            }.bytes
            let error = transcodingError(logsRequest([record]), .logs)
            #expect(error?.code == (wireType < 5 ? .groupNotSupported : .invalidWireType))
            #expect(error?.path == "resourceLogs[0].scopeLogs[0].logRecords[0]")
        }
        let zero = transcodingError([0x00, 0x00], .logs)
        #expect(zero?.code == .invalidFieldNumber)
        // A tag that does not fit in 32 bits.
        var tag = Wire()
        tag.varint(UInt64(UInt32.max) + 1)
        #expect(transcodingError(tag.bytes + [0], .logs)?.code == .invalidFieldNumber)
    }

    @Test func truncatedFixedWidthFields() {
        for (wireType, size): (UInt8, Int) in [(1, 8), (5, 4)] {
            for available in 0..<size {
                let record = Wire {
                    $0.tag(1, wireType)
                    $0.raw([UInt8](repeating: 1, count: available))
                }.bytes
                let error = transcodingError(logsRequest([record]), .logs)
                #expect(error?.code == .truncated)
                #expect(error?.path == "resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano")
            }
        }
    }

    @Test func everyPrefixOfEveryFixtureTranscodesOrThrows() throws {
        for name in Fixtures.requestNames() {
            let signal = try #require(Fixtures.signal(of: name))
            let input = try Fixtures.bytes(name + ".pb")
            for end in 0..<input.count {
                do {
                    let output = try OTLPProtobuf.transcodeToJSON(Array(input[..<end]), signal: signal)
                    _ = try JSONParser(maxDepth: 64).parse(output)
                } catch let error as OTLPProtobufError {
                    #expect(!error.message.isEmpty)
                }
            }
        }
    }

    @Test func everySingleByteCorruptionTranscodesOrThrows() throws {
        let input = try Fixtures.bytes("traces-basic.pb")
        for index in input.indices {
            for replacement: UInt8 in [0x00, 0x7F, 0x80, 0xFF] {
                var corrupted = input
                corrupted[index] = replacement
                if let output = try? OTLPProtobuf.transcodeToJSON(corrupted, signal: .traces) {
                    #expect(throws: Never.self) { _ = try JSONParser(maxDepth: 64).parse(output) }
                }
            }
        }
    }
}
