import PulseHashing
import PulseJSON
import PulseTestSupport

@testable import PulseGateway

/// Builders for OTLP/JSON test bodies.
enum OTLP {
    static func string(_ key: String, _ value: String) -> String {
        #"{"key":"\#(key)","value":{"stringValue":"\#(value)"}}"#
    }

    static func int(_ key: String, _ value: Int) -> String {
        #"{"key":"\#(key)","value":{"intValue":"\#(value)"}}"#
    }

    /// The resource attributes of a typical iOS app.
    static let iosResource = [
        string("device.id", "dev-1"), string("app.installation.id", "inst-1"), string("service.version", "2.4.1"),
        int("apsio.app.build_number", 241), string("telemetry.sdk.name", "pulsekit"),
        string("telemetry.sdk.version", "2.3.0"), string("os.name", "iOS"), string("os.type", "darwin"),
        string("apsio.app.package_name", "com.example.shop"),
    ]

    static func logs(resource: [String] = iosResource, scope: String = "ShopKit", records: [String]) -> String {
        #"{"resourceLogs":[{"resource":{"attributes":[\#(resource.joined(separator: ","))]},"scopeLogs":[{"scope":{"name":"\#(scope)"},"logRecords":[\#(records.joined(separator: ","))]}]}]}"#
    }

    static func spans(resource: [String] = iosResource, spans: [String]) -> String {
        #"{"resourceSpans":[{"resource":{"attributes":[\#(resource.joined(separator: ","))]},"scopeSpans":[{"scope":{"name":"net"},"spans":[\#(spans.joined(separator: ","))]}]}]}"#
    }

    static func metrics(resource: [String] = iosResource, metrics: [String]) -> String {
        #"{"resourceMetrics":[{"resource":{"attributes":[\#(resource.joined(separator: ","))]},"scopeMetrics":[{"scope":{"name":"perf"},"metrics":[\#(metrics.joined(separator: ","))]}]}]}"#
    }

    static func record(_ seconds: Int, attributes: [String] = [], extra: String = "") -> String {
        #"{"timeUnixNano":"\#(seconds)000000000","attributes":[\#(attributes.joined(separator: ","))]\#(extra)}"#
    }

    /// A plain record at 1 700 000 000 s, then crash `crash-42` (EXC_BAD_ACCESS on SIGSEGV) at
    /// 1 700 000 003 s, followed by `more` of its attributes: the crash logs of the mapping tests.
    static func crash42Records(more: [String] = []) -> [String] {
        [
            record(1_700_000_000, attributes: [string("log.record.uid", "u-0")]),
            record(
                1_700_000_003,
                attributes: [
                    string("app.crash.id", "crash-42"), string("exception.type", "EXC_BAD_ACCESS"),
                    string("exception.message", "bad pointer"), string("exception.stacktrace", "0 Shop"),
                    string("app.crash.signal", "SIGSEGV"),
                ] + more),
        ]
    }

    /// Fallbacks of an app whose `appIdentity.missingIdentity` is `refuse` (no headers).
    static let refusing = IdentityFallbacks(app: AppIdentityPolicy.Settings(missingIdentity: .refuse))

    /// The identity JSON of ``iosResource`` for app `shop`.
    static let iosIdentity =
        #"{"projectId":"shop","installationId":"inst-1","deviceId":"dev-1","userId":null,"appVersion":"2.4.1","buildNumber":241,"sdkVersion":"pulsekit/2.3.0","platform":"ios","packageName":"com.example.shop"}"#

    static func map(
        _ json: String, signal: OTLPSignal, app: String = "shop", batchID: String = "b-1",
        receivedAt: Int64 = 1_700_000_100_000, sentAt: Int64? = nil, fallbacks: IdentityFallbacks = IdentityFallbacks()
    ) throws -> MappedRequest {
        let document = try JSONParser().parse(Array(json.utf8))
        return try OTLPMapper.map(
            document.root, signal: signal,
            context: MappingContext(
                appID: app, batchID: batchID, receivedAt: receivedAt, sentAt: sentAt, fallbacks: fallbacks))
    }

    /// SHA-256 hex of length-prefixed fields, computed independently of `SHA256.updateField`.
    static func fieldHash(_ fields: [String]) -> String {
        SHA256.hexDigest(lengthPrefixedFields(fields))
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
}
