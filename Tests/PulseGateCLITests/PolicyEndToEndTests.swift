import Foundation
import PulseGateway
import PulseIngest
import PulseProtocol
import PulseTestSupport
import PulseUploader
import Testing

/// The remote policy end to end over loopback: the ingest server's config file → `POST /reload` on its
/// admin endpoint (the SIGHUP equivalent) → revision bump + `config.invalidate` → the gateway's
/// CLIENT_CONFIG_PULL → its cache → `Apsio-Policy-Revision` / `GET /v1/policy` → the uploader applies it.
@Suite struct PolicyEndToEndTests {
    struct System {
        let directory: String
        let configPath: String
        let ingest: IngestServer
        let gateway: RunningGateway
        let uploader: Uploader

        func writeConfig(_ policy: String) throws {
            let text = #"{"apps":[{"appId":"shop","packages":["*"],"policy":\#(policy)}]}"#
            try text.write(toFile: configPath, atomically: true, encoding: .utf8)
        }

        /// `POST /reload` on the ingest admin endpoint; returns the response body.
        func reload() async throws -> String {
            let port = try #require(ingest.adminPort)
            let response = try await RawHTTPConnection.exchange(
                port: port, method: "POST", target: "/reload", receiveTimeoutSeconds: 20)
            #expect(response.status == 200)
            return response.bodyText
        }

        func stop() async throws {
            try await uploader.close()
            await gateway.shutdown()
            await ingest.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    static func start() async throws -> System {
        let directory = try ScratchDirectory("policy-e2e").path
        let configPath = directory + "/ingest-config.json"
        let initial = #"{"apps":[{"appId":"shop","packages":["*"],"policy":{"revision":1}}]}"#
        try initial.write(toFile: configPath, atomically: true, encoding: .utf8)
        var ingestConfiguration = IngestConfiguration(
            dataDirectory: directory + "/ingest", policy: try IngestPolicy.load(path: configPath))
        ingestConfiguration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
        ingestConfiguration.admin = IngestListenAddress(host: "127.0.0.1", port: 0)
        ingestConfiguration.policyFile = configPath
        let ingest = try await IngestServer.start(ingestConfiguration)
        var gatewayConfiguration = GatewayConfiguration(dataDirectory: directory + "/gateway", listenPort: 0)
        gatewayConfiguration.upstream = UpstreamAddress(host: "127.0.0.1", port: ingest.port)
        let gateway = try await GatewayApp.start(gatewayConfiguration)
        let configuration = UploaderConfiguration(
            endpoint: "http://127.0.0.1:\(gateway.httpPort)", appId: "shop", dataDirectory: directory + "/uploader")
        let uploader = try await Uploader(configuration: configuration)
        return System(
            directory: directory, configPath: configPath, ingest: ingest, gateway: gateway, uploader: uploader)
    }

    @Test func aPolicyChangeInTheIngestConfigReachesTheUploader() async throws {
        let system = try await Self.start()
        let uploader = system.uploader
        let gateway = system.gateway

        // First upload: the forwarder's CONNECT reports revision 1; the gateway pulls it.
        try await uploader.record(.event(EventEntry(name: "launch")))
        #expect(try await uploader.flush().delivered == 1)
        #expect(await eventually { gateway.policyRevision(app: "shop") == 1 })
        // The next upload response announces revision 1; the uploader fetches and applies it.
        try await uploader.record(.event(EventEntry(name: "tap")))
        #expect(try await uploader.flush().delivered == 1)
        #expect(uploader.appliedPolicyRevision == 1)
        #expect(uploader.policy.diagnosticsLevel == .batchSummaries)

        // Raise the diagnostics level: reload → revision 2 → config.invalidate → the gateway pulls.
        try system.writeConfig(#"{"revision":1,"diagnosticsLevel":"callDetails"}"#)
        #expect(try await system.reload() == #"{"reloaded":true,"changedApps":["shop"]}"#)
        #expect(await eventually { gateway.policyRevision(app: "shop") == 2 })
        try await uploader.record(.event(EventEntry(name: "tap")))
        #expect(try await uploader.flush().delivered == 1)
        #expect(uploader.appliedPolicyRevision == 2)
        #expect(uploader.policy.diagnosticsLevel == .callDetails)

        // Kill switch on: records waiting in the queue are purged and collection stops.
        try await uploader.record(.event(EventEntry(name: "queued-1")))
        try await uploader.record(.event(EventEntry(name: "queued-2")))
        #expect(try await uploader.status().totalRecords == 2)
        try system.writeConfig(#"{"revision":3,"diagnosticsLevel":"callDetails","killSwitch":true}"#)
        _ = try await system.reload()
        #expect(await eventually { gateway.policyRevision(app: "shop") == 3 })
        #expect(try await uploader.refreshPolicy() == .applied(revision: 3))
        var status = try await uploader.status()
        #expect(status.killSwitch)
        #expect(status.totalRecords == 0)
        #expect(status.drops[.killSwitch]?.records == 2)
        await #expect(throws: UploaderError.self) { try await uploader.record(.event(EventEntry(name: "refused"))) }

        // Cleared again: collection resumes and records flow to the ingest server.
        try system.writeConfig(#"{"revision":4,"diagnosticsLevel":"callDetails","killSwitch":false}"#)
        _ = try await system.reload()
        #expect(await eventually { gateway.policyRevision(app: "shop") == 4 })
        #expect(try await uploader.refreshPolicy() == .applied(revision: 4))
        status = try await uploader.status()
        #expect(!status.killSwitch)
        try await uploader.record(.event(EventEntry(name: "resumed")))
        #expect(try await uploader.flush().delivered == 1)
        let ingest = system.ingest
        #expect(
            await eventually {
                (try? await ingest.events(app: "shop", limit: 100).contains { $0.name == "resumed" }) == true
            })
        #expect(try await uploader.status().policyRevision == 4)
        try await system.stop()
    }
}
