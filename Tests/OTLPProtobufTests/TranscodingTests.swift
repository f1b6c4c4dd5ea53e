import OTLPProtobuf
import PulseJSON
import PulseKit
import PulseTestSupport
import Testing

/// The OTLP/JSON mapping and the limits.
@Suite struct TranscodingTests {
    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    @Test func emptyRequestsAreEmptyObjects() throws {
        for signal in OTLPProtobufSignal.allCases {
            #expect(text(try OTLPProtobuf.transcodeToJSON([], signal: signal)) == "{}")
        }
    }

    @Test func idsAreLowercaseHexAndBytesAreBase64() throws {
        let traceID: [UInt8] = [
            0x5B, 0x8E, 0xFF, 0xF7, 0x98, 0x03, 0x81, 0x03, 0xD2, 0x69, 0xB6, 0x33, 0x81, 0x3F, 0xC6, 0x0C,
        ]
        let spanID: [UInt8] = [0xEE, 0xE1, 0x9B, 0x7E, 0xC3, 0xC1, 0xB1, 0x74]
        let request = Wire { request in
            request.field(1) { resourceSpans in
                resourceSpans.field(2) { scopeSpans in
                    scopeSpans.field(2) { span in
                        span.field(1, traceID)
                        span.field(2, spanID)
                        span.field(4, [0x00, 0x01])
                        span.field(9) { attribute in
                            attribute.field(1, "raw")
                            attribute.field(2) { $0.field(7, [0xFB, 0xFF, 0x00, 0x61]) }
                        }
                    }
                }
            }
        }.bytes
        let json = text(try OTLPProtobuf.transcodeToJSON(request, signal: .traces))
        #expect(
            json
                == #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c","#
                + #""spanId":"eee19b7ec3c1b174","parentSpanId":"0001","#
                + #""attributes":[{"key":"raw","value":{"bytesValue":"+/8AYQ=="}}]}]}]}]}"#)
    }

    @Test func scalarsFollowTheOTLPJSONEncoding() throws {
        let record = Wire { record in
            record.fixed64Field(1, UInt64.max)  // fixed64: decimal string
            record.varintField(2, UInt64.max)  // enum -1 (ten-byte varint): number
            record.varintField(7, 1 << 32 | 3)  // uint32: low 32 bits
            record.fixed32Field(8, UInt32.max)  // fixed32: number
            record.field(12, "event")
            record.field(6) { attribute in
                attribute.field(1, "nan")
                attribute.field(2) { $0.doubleField(4, .nan) }
            }
            record.field(6) { attribute in
                attribute.field(1, "-inf")
                attribute.field(2) { $0.doubleField(4, -.infinity) }
            }
            record.field(6) { attribute in
                attribute.field(1, "int")
                attribute.field(2) { $0.varintField(3, UInt64(bitPattern: Int64.min)) }
            }
        }.bytes
        let json = text(try OTLPProtobuf.transcodeToJSON(logsRequest([record]), signal: .logs))
        #expect(
            json
                == #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"18446744073709551615","#
                + #""severityNumber":-1,"attributes":[{"key":"nan","value":{"doubleValue":"NaN"}},"#
                + #"{"key":"-inf","value":{"doubleValue":"-Infinity"}},"#
                + #"{"key":"int","value":{"intValue":"-9223372036854775808"}}],"#
                + #""droppedAttributesCount":3,"flags":4294967295,"eventName":"event"}]}]}]}"#)
    }

    @Test func defaultsAreOmittedButPresenceIsKept() throws {
        let record = Wire { record in
            record.fixed64Field(1, 0)
            record.varintField(2, 0)
            record.field(3, "")
            record.field(9, [])
            record.field(5) { $0.field(1, "") }  // oneof member: kept even when empty
            record.field(6) { $0.field(1, "no-value") }  // KeyValue without value
            record.field(6) { attribute in
                attribute.field(1, "empty")
                attribute.field(2, [])  // present but empty AnyValue
            }
        }.bytes
        let json = text(try OTLPProtobuf.transcodeToJSON(logsRequest([record]), signal: .logs))
        #expect(
            json
                == #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":""},"#
                + #""attributes":[{"key":"no-value"},{"key":"empty","value":{}}]}]}]}]}"#)

        let point = Wire { point in
            point.fixed64Field(4, 0)  // count: implicit, omitted
            point.doubleField(5, 0)  // sum: optional, kept
            point.doubleField(11, -0.0)  // min: kept with its sign
        }.bytes
        let metrics = Wire { request in
            request.field(1) { resourceMetrics in
                resourceMetrics.field(1, [])  // empty resource: present
                resourceMetrics.field(2) { $0.field(2) { $0.field(9) { $0.field(1, point) } } }
            }
        }.bytes
        #expect(
            text(try OTLPProtobuf.transcodeToJSON(metrics, signal: .metrics))
                == #"{"resourceMetrics":[{"resource":{},"scopeMetrics":[{"metrics":[{"histogram":"#
                + #"{"dataPoints":[{"sum":0.0,"min":-0.0}]}}]}]}]}"#)
    }

    @Test func singularMessagesMergeAndOneofsKeepTheLastMember() throws {
        let record = Wire { record in
            record.field(5) { $0.field(5) { $0.field(1) { $0.field(1, "a") } } }
            record.field(5) { $0.field(5) { $0.field(1) { $0.field(1, "b") } } }  // merged arrayValue
            record.field(3, "first")
            record.field(3, "last")
        }.bytes
        let json = text(try OTLPProtobuf.transcodeToJSON(logsRequest([record]), signal: .logs))
        #expect(
            json
                == #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityText":"last","#
                + #""body":{"arrayValue":{"values":[{"stringValue":"a"},{"stringValue":"b"}]}}}]}]}]}"#)

        let switched = Wire { record in
            record.field(5) { body in
                body.field(5) { $0.field(1) { $0.field(1, "dropped") } }
                body.varintField(2, 1)
            }
        }.bytes
        #expect(
            try firstLogRecord(try OTLPProtobuf.transcodeToJSON(logsRequest([switched]), signal: .logs))["body"]
                == .object([JSONMember(key: "boolValue", value: .bool(true))]))
    }

    @Test func aOneofMessageMergesOnlyTheRunAfterTheLastOtherMember() throws {
        let record = Wire { record in
            record.field(5) { body in
                body.field(5) { $0.field(1) { $0.field(1, "cleared") } }
                body.varintField(2, 1)
                body.field(5) { $0.field(1) { $0.field(1, "y") } }
                body.field(99, "skipped")  // an unknown field between the run's occurrences
                body.field(5) { $0.field(1) { $0.field(1, "z") } }
            }
        }.bytes
        #expect(
            text(try OTLPProtobuf.transcodeToJSON(logsRequest([record]), signal: .logs))
                == #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"arrayValue":{"values":"#
                + #"[{"stringValue":"y"},{"stringValue":"z"}]}}}]}]}]}"#)

        // The member that lost is still validated, with its own path.
        let dropped = Wire { record in
            record.field(5) { body in
                body.field(5) { $0.field(1) { $0.field(1, [0x61, 0xC0, 0x80]) } }
                body.varintField(2, 1)
            }
        }.bytes
        let error = try #require(transcodingError(logsRequest([dropped]), .logs))
        #expect(error.code == .invalidUTF8)
        #expect(error.path == "resourceLogs[0].scopeLogs[0].logRecords[0].body.arrayValue.values[0].stringValue")
    }

    @Test func invalidUTF8IsRejectedWithoutEchoingThePayload() throws {
        let record = Wire { record in
            record.field(6) { attribute in
                attribute.field(1, "password")
                attribute.field(2) { $0.field(1, Array("secret-token-".utf8) + [0xC0, 0x80]) }
            }
        }.bytes
        let error = try #require(transcodingError(logsRequest([record]), .logs))
        #expect(error.code == .invalidUTF8)
        #expect(error.path == "resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.stringValue")
        #expect(!error.description.contains("secret"))
    }

    private func nestedBody(_ levels: Int) -> [UInt8] {
        var value = Wire { $0.field(1, "bottom") }.bytes
        for _ in 0..<levels {
            value = Wire { any in any.field(5) { $0.field(1, value) } }.bytes
        }
        return logsRequest([Wire { $0.field(5, value) }.bytes])
    }

    @Test func nestingIsBoundedAndTheOutputFitsTheGatewayParser() throws {
        // Request, ResourceLogs, ScopeLogs, LogRecord, then AnyValue/ArrayValue pairs: the deepest
        // AnyValue within 32 levels sits 13 arrays down.
        let deepest = try OTLPProtobuf.transcodeToJSON(nestedBody(13), signal: .logs)
        #expect(throws: Never.self) { _ = try JSONParser(maxDepth: 64).parse(deepest) }
        let error = try #require(transcodingError(nestedBody(14), .logs))
        #expect(error.code == .nestingTooDeep)
        #expect(error.message.hasSuffix(": messages nested deeper than 32 levels"))

        let shallow = OTLPProtobufLimits(maxDepth: 5)
        #expect(throws: Never.self) {
            _ = try OTLPProtobuf.transcodeToJSON(nestedBody(0), signal: .logs, limits: shallow)
        }
        let tooDeep = try #require(transcodingError(nestedBody(1), .logs, limits: shallow))
        #expect(tooDeep.path == "resourceLogs[0].scopeLogs[0].logRecords[0].body.arrayValue")
        // Thousands of levels fail cleanly, without exhausting the stack.
        #expect(transcodingError(nestedBody(5_000), .logs)?.code == .nestingTooDeep)
        #expect(OTLPProtobufLimits(maxDepth: 1_000).maxDepth == 100)
        #expect(OTLPProtobufLimits(maxDepth: -1).maxDepth == 1)
    }

    @Test func outputSizeIsBounded() throws {
        _ = try checkOutputBound { try OTLPProtobuf.transcodeToJSON($0, signal: .logs, limits: $1).count }
    }

    @Test func manyEmptyElementsStayLinear() throws {
        // 200 000 empty ResourceLogs in 400 KB: each becomes "{}".
        let request: [UInt8] = (0..<400_000).map { $0 % 2 == 0 ? 0x0A : 0x00 }
        let json = try OTLPProtobuf.transcodeToJSON(request, signal: .logs)
        #expect(json.count == #"{"resourceLogs":[]}"#.utf8.count + 200_000 * 3 - 1)
    }
}

@Suite struct ResponseEncodingTests {
    @Test func fullSuccessIsTheEmptyMessage() {
        for signal in OTLPProtobufSignal.allCases {
            #expect(OTLPProtobuf.encodeResponse(signal: signal, rejected: 0, errorMessage: "").isEmpty)
        }
    }

    @Test func partialSuccessCarriesTheCountAndMessage() {
        let bytes = OTLPProtobuf.encodeResponse(signal: .logs, rejected: 3, errorMessage: "bad")
        #expect(bytes == [0x0A, 0x07, 0x08, 0x03, 0x12, 0x03, 0x62, 0x61, 0x64])
        #expect(
            OTLPProtobuf.encodeResponse(signal: .traces, rejected: 300, errorMessage: "")
                == [0x0A, 0x03, 0x08, 0xAC, 0x02])
        #expect(
            OTLPProtobuf.encodeResponse(signal: .metrics, rejected: 0, errorMessage: "w")
                == [0x0A, 0x03, 0x12, 0x01, 0x77])
    }

    @Test func statusEncodesCodeAndMessage() {
        #expect(OTLPProtobuf.encodeStatus(code: 3, message: "no") == [0x08, 0x03, 0x12, 0x02, 0x6E, 0x6F])
        #expect(OTLPProtobuf.encodeStatus(code: 0, message: "").isEmpty)
        #expect(
            OTLPProtobuf.encodeStatus(code: -1, message: "") == [0x08] + [UInt8](repeating: 0xFF, count: 9) + [0x01])
    }

    @Test func mediaType() {
        #expect(OTLPProtobuf.mediaType == "application/x-protobuf")
    }
}
