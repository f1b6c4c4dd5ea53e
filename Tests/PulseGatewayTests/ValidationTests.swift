import Foundation
import OTLPProtobuf
import PulseHTTP
import PulseJSON
import PulseTestSupport
import Testing

@testable import PulseGateway

/// Strict OTLP/JSON: a known member of the wrong JSON type fails the request with 400 naming its
/// JSON path (proto3 JSON mapping); unknown members, `null` and every accepted form still pass.
@Suite struct ValidationTests {
    /// A body with one wrongly typed member and the exact message the gateway must answer.
    struct WrongType: Sendable, CustomTestStringConvertible {
        var signal: OTLPSignal
        var body: String
        var message: String

        init(_ signal: OTLPSignal, _ body: String, _ message: String) {
            self.signal = signal
            self.body = body
            self.message = message
        }

        var testDescription: String { message }
    }

    static let wrongTypes: [WrongType] = [
        WrongType(
            .logs, #"{"resourceLogs":["x"]}"#,
            #"resourceLogs[0]: expected an object"#),
        WrongType(
            .logs, #"{"resourceLogs":[null]}"#,
            #"resourceLogs[0]: expected an object, not null"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"resource":[]}]}"#,
            #"resourceLogs[0].resource: expected an object"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"resource":{"attributes":5}}]}"#,
            #"resourceLogs[0].resource.attributes: expected an array"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"resource":{"droppedAttributesCount":-1}}]}"#,
            #"resourceLogs[0].resource.droppedAttributesCount: expected an unsigned 32-bit integer"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":{}}]}"#,
            #"resourceLogs[0].scopeLogs: expected an array"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"schemaUrl":1}]}"#,
            #"resourceLogs[0].schemaUrl: expected a string"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"scope":"x"}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].scope: expected an object"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"scope":{"name":5}}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].scope.name: expected a string"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":"x"}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords: expected an array"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[5]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0]: expected an object"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":5}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes: expected an array"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":["x"]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0]: expected an object"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":5}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].key: expected a string"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":"x"}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value: expected an object"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"stringValue":5}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.stringValue: expected a string"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"boolValue":"true"}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.boolValue: expected true or false"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"intValue":"x"}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.intValue: expected a 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"intValue":1.5}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.intValue: expected a 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"doubleValue":"abc"}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.doubleValue: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"doubleValue":"inf"}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.doubleValue: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"bytesValue":5}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.bytesValue: expected a base64 string"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"arrayValue":[]}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.arrayValue: expected an object"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"arrayValue":{"values":{}}}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.arrayValue.values: expected an array"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"arrayValue":{"values":[{"stringValue":"a"},5]}}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.arrayValue.values[1]: expected an object"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"kvlistValue":"x"}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.kvlistValue: expected an object"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"kvlistValue":{"values":[{"key":1}]}}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.kvlistValue.values[0].key: expected a string"#
        ),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"k","value":{"kvlistValue":{"values":[{"key":"a","value":{"arrayValue":{"values":[{"intValue":"x"}]}}}]}}}]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.kvlistValue.values[0].value.arrayValue.values[0].intValue: expected a 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":"x"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].body: expected an object"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"kvlistValue":{"values":5}}}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].body.kvlistValue.values: expected an array"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":{}}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"-5"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":-5}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"observedTimeUnixNano":"soon"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].observedTimeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":"ERROR"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].severityNumber: expected an enum value (an integer or its name)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":9.5}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].severityNumber: expected an enum value (an integer or its name)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityNumber":[9]}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].severityNumber: expected an enum value (an integer or its name)"#
        ),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"severityText":5}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].severityText: expected a string"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"eventName":true}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].eventName: expected a string"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"flags":"x"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].flags: expected an unsigned 32-bit integer"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":5}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].traceId: expected 32 hex characters (or an empty string)"#),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"traceId":"5b8efff798038103d269b633813fc60"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].traceId: expected 32 hex characters (or an empty string)"#),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"spanId":"eee19b7ec3c1b17z"}]}]}]}"#,
            #"resourceLogs[0].scopeLogs[0].logRecords[0].spanId: expected 16 hex characters (or an empty string)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":{}}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans: expected an array"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":"x"}]}"#,
            #"resourceSpans[0].scopeSpans: expected an array"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"xyz"}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].traceId: expected 32 hex characters (or an empty string)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":12}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].spanId: expected 16 hex characters (or an empty string)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"parentSpanId":"eee19b7ec3c1b1"}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].parentSpanId: expected 16 hex characters (or an empty string)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":5}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].name: expected a string"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"CLIENT"}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].kind: expected an enum value (an integer or its name)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":{}}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].kind: expected an enum value (an integer or its name)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":4294967296}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].kind: expected an enum value (an integer or its name)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":[]}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"endTimeUnixNano":true}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].endTimeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":{}}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].attributes: expected an array"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"status":"x"}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].status: expected an object"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"status":{"code":"BAD"}}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].status.code: expected an enum value (an integer or its name)"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"status":{"message":1}}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].status.message: expected a string"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"events":"x"}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].events: expected an array"#),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"events":[{"timeUnixNano":"x"}]}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].events[0].timeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"links":[{"traceId":5}]}]}]}]}"#,
            #"resourceSpans[0].scopeSpans[0].spans[0].links[0].traceId: expected 32 hex characters (or an empty string)"#
        ),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":"x"}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics: expected an array"#),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"name":5}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].name: expected a string"#),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"unit":[]}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].unit: expected a string"#),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":"x"}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].gauge: expected an object"#),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":{}}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints: expected an array"#),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asDouble":"abc"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints[0].asDouble: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"asInt":"1.5"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints[0].asInt: expected a 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"attributes":5}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints[0].attributes: expected an array"#),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{"exemplars":[{"spanId":"q"}]}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].gauge.dataPoints[0].exemplars[0].spanId: expected 16 hex characters (or an empty string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"sum":{"dataPoints":[{"timeUnixNano":"x"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints[0].timeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"sum":{"dataPoints":[{"startTimeUnixNano":{}}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints[0].startTimeUnixNano: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"sum":{"isMonotonic":"yes"}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].sum.isMonotonic: expected true or false"#),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"sum":{"aggregationTemporality":"X"}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].sum.aggregationTemporality: expected an enum value (an integer or its name)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"count":-1}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].count: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"sum":"x"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].sum: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"bucketCounts":"1"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].bucketCounts: expected an array"#),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"bucketCounts":["1","a"]}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].bucketCounts[1]: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"bucketCounts":[null]}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].bucketCounts[0]: expected an unsigned 64-bit integer (a number or a decimal string), not null"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"explicitBounds":1}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].explicitBounds: expected an array"#),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"explicitBounds":[1,true]}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].explicitBounds[1]: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"histogram":{"dataPoints":[{"min":{}}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].histogram.dataPoints[0].min: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"scale":"x"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].scale: expected a 32-bit integer"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"zeroCount":-3}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].zeroCount: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"positive":"x"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].positive: expected an object"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"negative":{"offset":1.5}}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].negative.offset: expected a 32-bit integer"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"exponentialHistogram":{"dataPoints":[{"positive":{"bucketCounts":[1,-1]}}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].exponentialHistogram.dataPoints[0].positive.bucketCounts[1]: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"summary":{"dataPoints":[{"quantileValues":{}}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].summary.dataPoints[0].quantileValues: expected an array"#),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"summary":{"dataPoints":[{"quantileValues":[{"quantile":0.5,"value":"x"}]}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].summary.dataPoints[0].quantileValues[0].value: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"summary":{"dataPoints":[{"count":"many"}]}}]}]}]}"#,
            #"resourceMetrics[0].scopeMetrics[0].metrics[0].summary.dataPoints[0].count: expected an unsigned 64-bit integer (a number or a decimal string)"#
        ),
    ]

    @Test(arguments: wrongTypes)
    func wronglyTypedMemberIsABadRequestNamingItsPath(_ item: WrongType) {
        let rejection = #expect(throws: IntakeRejection.self) { try OTLP.map(item.body, signal: item.signal) }
        #expect(rejection?.status == .badRequest)
        #expect(rejection?.message == item.message)
    }

    @Test(arguments: wrongTypes + duplicateKeys)
    func theWalkItselfStopsAtEveryWronglyTypedMember(_ item: WrongType) throws {
        // Some checks run as the walk reads a member (`MappingWalk.folded`) instead of in its pass
        // over the object: each wrongly typed member still stops the walk, and the walk agrees with
        // the in-order checks (the fuzzers' property).
        let document = try JSONParser().parse(Array(item.body.utf8))
        #expect(MappingFuzzHooks.disagreement(document.root) == nil)
    }

    // MARK: - Duplicate keys

    /// A known member twice in one object, at each level and in each signal: 400 naming its path.
    static let duplicateKeys: [WrongType] = [
        WrongType(
            .logs, #"{"resourceLogs":[],"resourceLogs":[{"scopeLogs":[]}]}"#, "resourceLogs: duplicate key"),
        WrongType(.logs, #"{"resourceLogs":[{}],"resourceLogs":null}"#, "resourceLogs: duplicate key"),
        WrongType(
            .logs, #"{"resourceLogs":[{"resource":{},"scopeLogs":[],"resource":{}}]}"#,
            "resourceLogs[0].resource: duplicate key"),
        WrongType(
            .logs, #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[],"logRecords":[{}]}]}]}"#,
            "resourceLogs[0].scopeLogs[0].logRecords: duplicate key"),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"a","stringValue":"b"}}]}]}]}"#,
            "resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue: duplicate key"),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"a","key":"b","value":{}}]}}]}"#,
            "resourceLogs[0].resource.attributes[0].key: duplicate key"),
        WrongType(
            .traces, #"{"resourceSpans":[{"scopeSpans":[{"spans":[{"spanId":"","name":"a","name":"b"}]}]}]}"#,
            "resourceSpans[0].scopeSpans[0].spans[0].name: duplicate key"),
        WrongType(.traces, #"{"resourceSpans":[],"resourceSpans":[]}"#, "resourceSpans: duplicate key"),
        WrongType(
            .metrics, #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{},"gauge":{}}]}]}]}"#,
            "resourceMetrics[0].scopeMetrics[0].metrics[0].gauge: duplicate key"),
        WrongType(.metrics, #"{"resourceMetrics":[],"resourceMetrics":[]}"#, "resourceMetrics: duplicate key"),
    ]

    @Test(arguments: duplicateKeys)
    func aDuplicateKeyIsABadRequestNamingItsPath(_ item: WrongType) {
        let rejection = #expect(throws: IntakeRejection.self) { try OTLP.map(item.body, signal: item.signal) }
        #expect(rejection?.status == .badRequest)
        #expect(rejection?.message == item.message)
    }

    @Test func unknownMembersMayRepeat() throws {
        let json = #"{"resourceLogs":[{"x":1,"x":2,"scopeLogs":[]}],"extra":[],"extra":{}}"#
        #expect(try OTLP.map(json, signal: .logs).records == 0)
    }

    @Test func developmentFieldsOfTheSchemaAreNotCheckedInJSON() throws {
        // Profiles' dictionary indexes and entity references are in the one schema table (the
        // protobuf decoder reads them) but not in the OTLP/JSON request schema: ignored like unknown
        // members, whatever their JSON type.
        func logs(resourceMember: String, firstAttribute: String) -> String {
            OTLP.logs(records: [OTLP.record(1)]).replacingOccurrences(
                of: #""resource":{"attributes":["#,
                with: #""resource":{"# + resourceMember + #","attributes":["# + firstAttribute)
        }
        let json = logs(
            resourceMember: #""entityRefs":"not an array""#,
            firstAttribute: #"{"key":"k","keyStrindex":"x","value":{"stringValueStrindex":[]}},"#)
        #expect(try OTLP.map(json, signal: .logs).records == 1)
        // Their neighbours are checked.
        let wrong = logs(resourceMember: #""entityRefs":1,"droppedAttributesCount":"many""#, firstAttribute: "")
        #expect(throws: IntakeRejection.self) { try OTLP.map(wrong, signal: .logs) }
    }

    @Test func integersBeyondSixtyFourBitsAreAValidJSONNumberButNotAValidUint64() async throws {
        let harness = try await GatewayHarness.start()
        // In a member nobody reads, and as a double: accepted (JSON has no integer range).
        let ignored = OTLP.logs(records: [
            #"{"timeUnixNano":"1","x":134265240667751713501666707767296,"body":{"doubleValue":1e300}}"#
        ])
        let accepted = try await harness.post(String(ignored.dropLast()) + #","extra":[99999999999999999999]}"#)
        #expect(accepted.status == 200, "\(accepted.bodyText)")
        let double = OTLP.logs(records: [#"{"body":{"doubleValue":99999999999999999999}}"#])
        #expect(try await harness.post(double).status == 200)
        // In a 64-bit field: 400 naming it, like any out-of-range value.
        let tooLarge = OTLP.logs(records: [#"{"timeUnixNano":18446744073709551616}"#])
        let refused = try await harness.post(tooLarge)
        #expect(refused.status == 400)
        #expect(
            refused.bodyText.contains(
                "resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano: expected an unsigned 64-bit integer"))
        let belowMinimum = OTLP.logs(records: [
            #"{"attributes":[{"key":"k","value":{"intValue":-9223372036854775809}}]}"#
        ])
        let refusedToo = try await harness.post(belowMinimum)
        #expect(refusedToo.status == 400)
        #expect(refusedToo.bodyText.contains("attributes[0].value.intValue: expected a 64-bit integer"))
        await harness.stop()
    }

    @Test func theFirstProblemInDocumentOrderIsReported() {
        let json = OTLP.logs(records: [OTLP.record(1), #"{"timeUnixNano":"x","severityText":5}"#])
        let rejection = #expect(throws: IntakeRejection.self) { try OTLP.map(json, signal: .logs) }
        #expect(
            rejection?.message == "resourceLogs[0].scopeLogs[0].logRecords[1].timeUnixNano: "
                + "expected an unsigned 64-bit integer (a number or a decimal string)")
    }

    @Test func aWrongTypeLaterInTheRequestWinsOverAMappingRejection() {
        // The walk meets the unknown apsio.event.kind first; the type checks ran before the mapping.
        let bogus = OTLP.string("apsio.event.kind", "Bogus")
        let json = OTLP.logs(records: [OTLP.record(1, attributes: [bogus]), #"{"severityText":5}"#])
        let rejection = #expect(throws: IntakeRejection.self) { try OTLP.map(json, signal: .logs) }
        #expect(rejection?.message == "resourceLogs[0].scopeLogs[0].logRecords[1].severityText: expected a string")
        let alone = #expect(throws: IntakeRejection.self) {
            try OTLP.map(OTLP.logs(records: [OTLP.record(1, attributes: [bogus])]), signal: .logs)
        }
        #expect(alone?.message.hasPrefix("resource 0: apsio.event.kind \"Bogus\" is not one of") == true)
    }

    /// Members the mapping walk passes without reading them are checked all the same.
    static let skippedMembers: [WrongType] = [
        WrongType(
            .logs, OTLP.logs(records: [OTLP.record(1, attributes: [#"{"key":"url.query","value":{"intValue":"x"}}"#])]),
            "resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.intValue: "
                + "expected a 64-bit integer (a number or a decimal string)"),
        WrongType(
            .logs, OTLP.logs(records: [OTLP.record(1, attributes: [#"{"key":7,"value":{"arrayValue":[]}}"#])]),
            "resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].key: expected a string"),
        WrongType(
            .logs, OTLP.logs(records: [OTLP.record(1, attributes: [#"{"value":{"arrayValue":{"values":[null]}}}"#])]),
            "resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.arrayValue.values[0]: "
                + "expected an object, not null"),
        WrongType(
            .logs,
            OTLP.logs(records: [
                OTLP.record(1, attributes: [#"{"key":"url.full","value":{"stringValue":"https://x","boolValue":1}}"#])
            ]),
            "resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.boolValue: expected true or false"),
        WrongType(
            .logs,
            OTLP.logs(records: [
                OTLP.record(1, attributes: [#"{"key":"k","value":{"stringValue":"a","kvlistValue":{"values":[1]}}}"#])
            ]),
            "resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.kvlistValue.values[0]: expected an object"),
        WrongType(
            .logs,
            #"{"resourceLogs":[{"resource":{"attributes":[{"key":"a","value":{"doubleValue":"x"}}]},"scopeLogs":[]}]}"#,
            #"resourceLogs[0].resource.attributes[0].value.doubleValue: expected a number (or "NaN", "Infinity", "-Infinity")"#
        ),
        WrongType(
            .metrics,
            #"{"resourceMetrics":[{"scopeMetrics":[{"metrics":[{"gauge":{"dataPoints":[{}]},"sum":{"dataPoints":[null]}}]}]}]}"#,
            "resourceMetrics[0].scopeMetrics[0].metrics[0].sum.dataPoints[0]: expected an object, not null"),
        WrongType(
            .traces,
            #"{"resourceSpans":[{"scopeSpans":[{"spans":[],"scope":{"attributes":[{"key":"a","value":{"intValue":[]}}]}}]}]}"#,
            "resourceSpans[0].scopeSpans[0].scope.attributes[0].value.intValue: "
                + "expected a 64-bit integer (a number or a decimal string)"),
    ]

    @Test(arguments: skippedMembers)
    func membersTheWalkDoesNotReadAreCheckedToo(_ item: WrongType) {
        let rejection = #expect(throws: IntakeRejection.self) { try OTLP.map(item.body, signal: item.signal) }
        #expect(rejection?.message == item.message)
    }

    @Test func messagesNeverQuoteThePayload() {
        let json = OTLP.logs(records: [#"{"attributes":[{"key":"secret-key","value":{"intValue":"secret-value"}}]}"#])
        let rejection = #expect(throws: IntakeRejection.self) { try OTLP.map(json, signal: .logs) }
        #expect(rejection?.message.contains("secret") == false)
    }

    // MARK: - Accepted forms

    /// Bodies proto3 JSON accepts: each maps without error.
    static let accepted: [(OTLPSignal, String)] = [
        // 64-bit integers as numbers or decimal strings; null as absent; unknown members of any type.
        (
            .logs,
            OTLP.logs(records: [#"{"timeUnixNano":1700000000000000000,"observedTimeUnixNano":"1700000000000000000"}"#])
        ),
        (
            .logs,
            OTLP.logs(records: [
                #"{"timeUnixNano":null,"attributes":null,"body":null,"severityNumber":null,"traceId":null}"#
            ])
        ),
        (.logs, #"{"resourceLogs":null}"#),
        (.logs, #"{"resourceLogs":[{"resource":null,"scopeLogs":null,"schemaUrl":null}]}"#),
        (.logs, #"{"resourceLogs":[{"scopeLogs":[{"scope":null,"logRecords":null}]}]}"#),
        (.logs, #"{"resourceLogs":[],"futureField":{"x":[1]},"resourceSpans":"not this signal's"}"#),
        (.logs, OTLP.logs(records: [#"{"futureField":5,"attributes":[{"key":"k","value":{},"extra":1}]}"#])),
        (.logs, OTLP.logs(records: [#"{"attributes":[{"key":"k","value":{"futureValue":[1],"stringValue":"a"}}]}"#])),
        // Ids as hex in either case, or empty.
        (.logs, OTLP.logs(records: [#"{"traceId":"5B8EFFF798038103D269B633813FC60C","spanId":""}"#])),
        // Enums as integers, decimal strings or names.
        (.logs, OTLP.logs(records: [#"{"severityNumber":"17"}"#])),
        (.traces, OTLP.spans(spans: [#"{"kind":"SPAN_KIND_SERVER","status":{"code":"STATUS_CODE_OK","message":""}}"#])),
        (
            .metrics,
            OTLP.metrics(metrics: [
                #"{"name":"m","sum":{"aggregationTemporality":"AGGREGATION_TEMPORALITY_CUMULATIVE","isMonotonic":true,"dataPoints":[{"asInt":5}]}}"#
            ])
        ),
        // Doubles as numbers, decimal strings and the three special strings; integral doubles for integers.
        (
            .metrics,
            OTLP.metrics(metrics: [
                #"{"name":"m","histogram":{"dataPoints":[{"count":3.0,"sum":"NaN","min":"-Infinity","max":"Infinity","bucketCounts":[1,"2"],"explicitBounds":[1.5,"2.5",3]}]}}"#
            ])
        ),
        (
            .metrics,
            OTLP.metrics(metrics: [
                #"{"name":"m","exponentialHistogram":{"dataPoints":[{"scale":-2,"zeroCount":"0","positive":{"offset":-1,"bucketCounts":["1"]},"negative":null,"zeroThreshold":0}]}}"#
            ])
        ),
        (
            .metrics,
            OTLP.metrics(metrics: [
                #"{"name":"m","summary":{"dataPoints":[{"quantileValues":[{"quantile":0.5,"value":"1e3"}]}]}}"#
            ])
        ),
        (
            .traces,
            OTLP.spans(spans: [
                #"{"events":[{"name":"e","timeUnixNano":"1"}],"links":[{"traceId":"","spanId":"","flags":256}],"droppedEventsCount":0}"#
            ])
        ),
    ]

    @Test(arguments: accepted.indices)
    func acceptedFormsStillMap(_ index: Int) throws {
        let (signal, json) = Self.accepted[index]
        _ = try OTLP.map(json, signal: signal)
    }

    @Test func enumNamesAndDecimalStringsMapLikeTheirNumbers() throws {
        let byName = OTLP.spans(spans: [
            #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"GET","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"1700000000000000000","status":{"code":"STATUS_CODE_ERROR"}}"#
        ])
        let byNumber = OTLP.spans(spans: [
            #"{"traceId":"5b8efff798038103d269b633813fc60c","spanId":"eee19b7ec3c1b174","name":"GET","kind":3,"startTimeUnixNano":1700000000000000000,"status":{"code":2}}"#
        ])
        let named = OTLP.text(try OTLP.map(byName, signal: .traces).drafts[0].payload)
        #expect(named == OTLP.text(try OTLP.map(byNumber, signal: .traces).drafts[0].payload))
        #expect(named.contains(#""kind":"Network""#))
        #expect(named.contains(#""span.kind":3"#))
        #expect(named.contains(#""span.status_code":2"#))

        let severity = OTLP.logs(records: [OTLP.record(1, extra: #","severityNumber":"SEVERITY_NUMBER_ERROR""#)])
        let text = OTLP.text(try OTLP.map(severity, signal: .logs).drafts[0].payload)
        #expect(text.contains(#""kind":"Error""#))
        #expect(text.contains(#""log.severity_number":17"#))
    }

    @Test func decimalStringDoublesMapAsNumbers() throws {
        let json = OTLP.metrics(metrics: [
            #"{"name":"m","gauge":{"dataPoints":[{"timeUnixNano":"1700000000000000000","asDouble":"1.5"}]}}"#
        ])
        let text = OTLP.text(try OTLP.map(json, signal: .metrics).drafts[0].payload)
        #expect(text.contains(#""metric.value":1.5"#), "\(text)")
    }

    // MARK: - Over HTTP

    @Test func intakeAnswersFourHundredWithThePathAndStoresNothing() async throws {
        let harness = try await GatewayHarness.start()
        let response = try await harness.post(#"{"resourceLogs":[{"scopeLogs":[{"logRecords":"x"}]}]}"#)
        #expect(response.status == 400)
        #expect(response.bodyText.contains("resourceLogs[0].scopeLogs[0].logRecords: expected an array"))
        #expect(response.bodyText.contains(#""code":3"#))
        let records = OTLP.logs(records: [OTLP.record(1), #"{"attributes":5}"#])
        let partlyBad = try await harness.post(records)
        #expect(partlyBad.status == 400)
        #expect(try IntakeHTTPTests.count("outbox", in: harness.directory) == 0)
        #expect(try IntakeHTTPTests.count("dedup", in: harness.directory) == 0)
        await harness.stop()
    }

    @Test func aDuplicateResourceLogsKeyIsRefusedOverHTTPAndStoresNothing() async throws {
        let harness = try await GatewayHarness.start()
        let records = OTLP.logs(records: [OTLP.record(1)])
        // The second array would otherwise be dropped silently.
        let body = String(records.dropLast()) + #","resourceLogs":[]}"#
        let response = try await harness.post(body, batchID: "dup-key")
        #expect(response.status == 400)
        #expect(response.bodyText.contains("resourceLogs: duplicate key"))
        #expect(response.bodyText.contains(#""code":3"#))
        #expect(try IntakeHTTPTests.count("outbox", in: harness.directory) == 0)
        #expect(try IntakeHTTPTests.count("dedup", in: harness.directory) == 0)
        await harness.stop()
    }
}
