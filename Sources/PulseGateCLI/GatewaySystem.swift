package import PulseGateway
package import PulseIngest

/// The gateway together with, when no upstream is configured, the reference Pulse ingest server
/// it forwards to — the composition `pulsegate serve` runs, callable from tests without `main`.
///
/// ```swift
/// let system = try await GatewaySystem.start(GatewayConfiguration(dataDirectory: dir, listenPort: 0))
/// // POST to http://127.0.0.1:\(system.gateway.httpPort)/v1/logs; events land in system.embeddedIngest
/// await system.shutdown()
/// ```
package final class GatewaySystem: Sendable {
    /// The running gateway.
    package let gateway: RunningGateway
    /// The in-process ingest server, when the gateway was started without an upstream.
    package let embeddedIngest: IngestServer?

    private init(gateway: RunningGateway, embeddedIngest: IngestServer?) {
        self.gateway = gateway
        self.embeddedIngest = embeddedIngest
    }

    /// Starts the gateway. First takes the data directory's lock and binds the listen address
    /// (``GatewayApp/bind(_:environment:)``), so a second gateway on the same data directory or a
    /// busy port fails before anything is started or written. Then, without
    /// `configuration.upstream`, starts the reference ingest server on a free loopback port (data
    /// in `<data-dir>/embedded-ingest`, every app accepted), points the gateway at it and says so
    /// in the log; then opens the gateway's storage and serves.
    ///
    /// - Parameter embeddedAdmin: where the embedded ingest server's admin endpoint listens
    ///   (`/events`, `/stats`, `/metrics`; `serve --admin`), `nil` for none. Ignored with an upstream.
    package static func start(
        _ configuration: GatewayConfiguration, environment: GatewayEnvironment = GatewayEnvironment(),
        embeddedAdmin: IngestListenAddress? = nil
    ) async throws -> GatewaySystem {
        let bound = try GatewayApp.bind(configuration, environment: environment)
        var ingest: IngestServer?
        var upstream = configuration.upstream
        if upstream == nil {
            var ingestConfiguration = IngestConfiguration(
                dataDirectory: configuration.dataDirectory + "/embedded-ingest", policy: .acceptingEveryApp)
            ingestConfiguration.listen = IngestListenAddress(host: "127.0.0.1", port: 0)
            ingestConfiguration.admin = embeddedAdmin
            ingestConfiguration.version = environment.version
            let server: IngestServer
            do {
                server = try await IngestServer.start(ingestConfiguration)
            } catch {
                await bound.cancel()
                throw error
            }
            upstream = UpstreamAddress(host: "127.0.0.1", port: server.port)
            environment.logger.info(
                "no --upstream given: started the embedded reference ingest server on loopback",
                ["upstream": "127.0.0.1:\(server.port)", "dataDir": ingestConfiguration.dataDirectory])
            if let admin = embeddedAdmin, let port = server.adminPort {
                let address = IngestListenAddress(host: admin.host, port: port)
                environment.logger.info(
                    "embedded upstream admin API: what reached the upstream",
                    ["admin": "http://\(address)", "try": "curl http://\(address)/events?app=shop"])
            }
            ingest = server
        }
        do {
            let gateway = try await bound.start(upstream: upstream)
            return GatewaySystem(gateway: gateway, embeddedIngest: ingest)
        } catch {
            await ingest?.shutdown()
            throw error
        }
    }

    /// Drains the gateway (stop accepting, finish in-flight requests, keep the outbox), then
    /// stops the embedded ingest server.
    package func shutdown() async {
        await gateway.shutdown()
        await embeddedIngest?.shutdown()
    }
}
