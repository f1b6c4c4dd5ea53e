import Foundation
import PulseGateway
import PulseIngest
import PulseTestSupport
import Testing

@testable import PulseGateCLI

/// `pulsegate serve` without `--upstream`: the gateway forwards to the embedded ingest server,
/// end to end over loopback.
@Suite struct EmbeddedUpstreamTests {
    static let example: [UInt8] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../docs/examples/otlp-logs.json").standardized
        return [UInt8](try! Data(contentsOf: url))
    }()

    /// Posts the example batch with a fixed batch id on a fresh connection.
    static func post(port: Int) async throws -> RawHTTPResponse {
        try await RawHTTPConnection.exchange(
            port: port, method: "POST", target: "/v1/logs",
            headers: [
                ("Content-Type", "application/json"), ("Apsio-App-Id", "shop-ios"), ("Apsio-Batch-Id", "e2e-0001"),
            ],
            body: example, receiveTimeoutSeconds: 20)
    }

    /// Runs `body` on `pulsegate serve` in this process on a free port with the embedded upstream
    /// (its admin API on `admin` when given), its data in a fresh scratch directory; shuts the
    /// gateway down after `body` and removes the directory.
    static func withEmbedded(
        admin: IngestListenAddress? = nil, _ body: (GatewaySystem) async throws -> Void
    ) async throws {
        let scratch = try ScratchDirectory("e2e")
        defer { scratch.remove() }
        let system = try await GatewaySystem.start(
            GatewayConfiguration(dataDirectory: scratch.path, listenPort: 0), embeddedAdmin: admin)
        try await body(system)
        await system.shutdown()
    }

    @Test func embeddedAdminShowsTheForwardedEvents() async throws {
        try await Self.withEmbedded(admin: IngestListenAddress(host: "127.0.0.1", port: 0)) { system in
            let admin = try #require(system.embeddedIngest?.adminPort)
            #expect(try await Self.post(port: system.gateway.httpPort).status == 200)
            let listed: @Sendable () async throws -> String = {
                try await RawHTTPConnection.exchange(
                    port: admin, target: "/events?app=shop-ios&limit=100", receiveTimeoutSeconds: 20
                ).bodyText
            }
            #expect(try await eventually { try await listed().components(separatedBy: "\"eventId\"").count - 1 >= 20 })
            let listing = try await listed()
            #expect(listing.components(separatedBy: "\"eventId\"").count - 1 == 20)
            #expect(listing.hasPrefix(#"{"app":"shop-ios","events":[{"#))
        }
    }

    @Test func batchPostedToGatewayLandsInEmbeddedIngestOnce() async throws {
        try await Self.withEmbedded { system in
            let ingest = try #require(system.embeddedIngest)
            let port = system.gateway.httpPort
            let first = try await Self.post(port: port)
            #expect(first.status == 200)
            #expect(first.bodyText == "{}")

            // The forwarder delivers asynchronously; wait (bounded) until the 20 records arrived.
            #expect(try await eventually { try await ingest.events(app: "shop-ios", limit: 100).count >= 20 })
            let events = try await ingest.events(app: "shop-ios", limit: 100)
            #expect(events.count == 20)
            #expect(Set(events.map(\.eventId)).count == 20)
            #expect(Set(events.map(\.deviceId)) == ["6F1C2A9E-0B7D-4E2B-9F4A-3E1D2C0B9A87"])
            #expect(Set(events.map(\.installationId)) == ["inst-5b1c9e"])
            let kinds = Set(events.map(\.kind))
            #expect(
                kinds.isSubset(of: [
                    "Analytics", "Crash", "Error", "Log", "Network", "Performance", "Runtime", "Breadcrumb",
                ]))

            // A retry of the same batch is a duplicate: answered 200, stored once.
            let retry = try await Self.post(port: port)
            #expect(retry.status == 200)
            #expect(retry.header("Apsio-Duplicate") == "true")
            // A duplicate adds no outbox row: once the outbox is empty, nothing more can arrive.
            #expect(await eventually { system.gateway.outboxBatches == 0 })
            #expect(try await ingest.events(app: "shop-ios", limit: 100).count == 20)
        }
    }

    static let protobufLogs: [UInt8] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../OTLPProtobufTests/Fixtures/logs-basic.pb").standardized
        return [UInt8](try! Data(contentsOf: url))
    }()

    static func postProtobuf(port: Int, body: [UInt8], batchID: String) async throws -> RawHTTPResponse {
        try await RawHTTPConnection.exchange(
            port: port, method: "POST", target: "/v1/logs",
            headers: [
                ("Content-Type", "application/x-protobuf"), ("Apsio-App-Id", "proto-app"),
                ("Apsio-Batch-Id", batchID), ("Apsio-Device-Id", "device-pb"), ("Apsio-Platform", "android"),
                ("Apsio-Sdk-Version", "opentelemetry/1.26.0"),
            ],
            body: body, receiveTimeoutSeconds: 20)
    }

    @Test func protobufBatchIsTranscodedMappedAndForwarded() async throws {
        try await Self.withEmbedded { system in
            let ingest = try #require(system.embeddedIngest)
            let port = system.gateway.httpPort

            let accepted = try await Self.postProtobuf(port: port, body: Self.protobufLogs, batchID: "pb-0001")
            #expect(accepted.status == 200)
            #expect(accepted.header("Content-Type") == "application/x-protobuf")
            #expect(accepted.body.isEmpty)  // an empty ExportLogsServiceResponse: full success

            #expect(try await eventually { try await ingest.events(app: "proto-app", limit: 100).count >= 7 })
            let events = try await ingest.events(app: "proto-app", limit: 100)
            #expect(events.count == 7)  // the fixture's 7 log records, one event each
            #expect(Set(events.map(\.deviceId)) == ["device-pb"])

            // Malformed protobuf: 400 with a protobuf google.rpc.Status body, nothing stored.
            let malformed = try await Self.postProtobuf(port: port, body: [0x0a, 0xff, 0x01], batchID: "pb-bad")
            #expect(malformed.status == 400)
            #expect(malformed.header("Content-Type") == "application/x-protobuf")
            #expect(malformed.body.first == 0x08)  // field 1 (code), varint
            #expect(malformed.body.count > 2)
        }
    }

    @Test func explicitUpstreamStartsNoEmbeddedServer() async throws {
        let scratch = try ScratchDirectory("e2e")
        defer { scratch.remove() }
        let directory = scratch.path
        var configuration = GatewayConfiguration(dataDirectory: directory, listenPort: 0)
        configuration.upstream = UpstreamAddress(host: "127.0.0.1", port: 9)
        let system = try await GatewaySystem.start(configuration)
        #expect(system.embeddedIngest == nil)
        await system.shutdown()
    }
}
