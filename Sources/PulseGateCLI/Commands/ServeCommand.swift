import Dispatch
import Foundation
import PulseGateway
import PulseIngest
import PulseJSON
import PulseKit

/// `pulsegate serve`: runs the gateway until SIGTERM or SIGINT; SIGHUP reloads the config file.
enum ServeCommand {
    static let usage = """
        USAGE: pulsegate serve [--listen HOST:PORT] [--upstream HOST:PORT] [--data-dir DIR] [--store URL]
                               [--config FILE] [--admin HOST:PORT] [--tls-cert FILE --tls-key FILE]

        Runs the OTLP/HTTP gateway. Without --upstream it starts the reference Pulse ingest server
        in-process on loopback and forwards there.

        OPTIONS (each also read from an environment variable; the flag wins, then the variable,
        then the config file, then the default):
          --listen HOST:PORT     HTTP listen address      PULSEGATE_LISTEN     default 127.0.0.1:4318
          --upstream HOST:PORT   Pulse upstream (msgtrans) PULSEGATE_UPSTREAM   default: embedded
          --data-dir DIR         database directory       PULSEGATE_DATA_DIR   default ./pulsegate-data
          --store URL            PostgreSQL store (fleet) PULSEGATE_STORE      default: SQLite in --data-dir
          --config FILE          JSON config file         PULSEGATE_CONFIG     (docs/operations.md)
          --admin HOST:PORT      with the embedded upstream only: its admin API (GET /events?app=…,
                                 /stats, /metrics) on a loopback address   PULSEGATE_ADMIN
          --tls-cert FILE        serve HTTPS: PEM chain   PULSEGATE_TLS_CERT   (config key tlsCert)
          --tls-key FILE         its PEM private key      PULSEGATE_TLS_KEY    (config key tlsKey)
          -h, --help             Show this help.

        `pulsegate validate` checks the same settings without starting anything.

        SIGNALS: SIGTERM/SIGINT drain and stop (the outbox is kept); SIGHUP reloads the config
        file's policy (allowed apps, app keys, default app, retention, outbox caps, app limits,
        log level) and re-reads the TLS certificate and key files (new handshakes use them; open
        connections are kept).
        Logs: one JSON object per line on standard error; a line that cannot be written is dropped
        and counted (pulsegate_log_lines_dropped_total), never fatal. While batches flow, a
        "traffic" line every 5 s counts them; every refused request is explained once.
        Operators: GET /status (HTML), /status.json, /metrics on the listen address.
        The data directory is locked (pulsegate.lock) while serve runs: a second process on it
        exits with status 1 naming the holder's pid.

        """

    /// The resolved command line.
    struct Options: Equatable {
        var listen: String?
        var upstream: String?
        var dataDirectory: String?
        var configPath: String?
        /// `--admin`: the embedded ingest server's admin address (loopback only).
        var admin: String?
        var tlsCertificate: String?
        var tlsKey: String?
        var store: String?
    }

    /// The flags `serve` (and `validate`) take, each with its environment variable.
    static let flags: [Flag] = [
        .value("--listen", environment: "PULSEGATE_LISTEN"), .value("--upstream", environment: "PULSEGATE_UPSTREAM"),
        .value("--data-dir", environment: "PULSEGATE_DATA_DIR"), .value("--config", environment: "PULSEGATE_CONFIG"),
        .value("--admin", environment: "PULSEGATE_ADMIN"), .value("--tls-cert", environment: "PULSEGATE_TLS_CERT"),
        .value("--tls-key", environment: "PULSEGATE_TLS_KEY"), .value("--store", environment: "PULSEGATE_STORE"),
    ]

    /// Parses flags, falling back to the environment; `nil` when help was asked for.
    static func parse(_ arguments: [String], environment: [String: String], command: String = "serve")
        throws(CLIError) -> Options?
    {
        guard
            let parsed = try FlagParser(command: command, flags: flags).parseCommand(
                arguments, environment: environment)
        else { return nil }
        return Options(
            listen: parsed.value("--listen"), upstream: parsed.value("--upstream"),
            dataDirectory: parsed.value("--data-dir"), configPath: parsed.value("--config"),
            admin: parsed.value("--admin"), tlsCertificate: parsed.value("--tls-cert"),
            tlsKey: parsed.value("--tls-key"), store: parsed.value("--store"))
    }

    /// Builds the gateway configuration: flags/environment over the config file over defaults.
    static func configuration(_ options: Options) throws(CLIError) -> GatewayConfiguration {
        let (configuration, problems) = resolve(options)
        guard let configuration, problems.isEmpty else {
            throw CLIError(.usage, "serve: \(GatewayError.invalidConfiguration(problems).message)")
        }
        return configuration
    }

    /// The configuration `serve` would run with, and every problem of it (the file's, then the
    /// resolved settings', with their key paths): what both `serve` and `validate` check.
    static func resolve(_ options: Options) -> (GatewayConfiguration?, [ConfigurationProblem]) {
        var problems: [ConfigurationProblem] = []
        var file: ConfigurationFile?
        if let path = options.configPath {
            if let data = FileManager.default.contents(atPath: path) {
                let (parsed, found) = ConfigurationFile.check([UInt8](data))
                file = parsed
                problems += found
            } else {
                return (nil, [ConfigurationProblem("", "cannot read the config file \(path)")])
            }
        }
        let dataDirectory = options.dataDirectory ?? file?.dataDirectory ?? "pulsegate-data"
        var configuration = GatewayConfiguration(dataDirectory: dataDirectory)
        if let listen = options.listen ?? file?.listen {
            do {
                let (host, port) = try GatewayConfiguration.parseListen(listen)
                configuration.listenHost = host
                configuration.listenPort = port
            } catch {
                problems.append(ConfigurationProblem("listen", error.message))
            }
        }
        if let upstream = options.upstream ?? file?.upstream, !upstream.isEmpty {
            do {
                configuration.upstream = try UpstreamAddress(parsing: upstream)
            } catch {
                problems.append(ConfigurationProblem("upstream", error.message))
            }
        }
        if let store = options.store ?? file?.store, !store.isEmpty {
            configuration.store = store
        }
        switch (options.tlsCertificate ?? file?.tlsCertificatePath, options.tlsKey ?? file?.tlsKeyPath) {
        case (let certificate?, let key?): configuration.tls = TLSFiles(certificatePath: certificate, keyPath: key)
        case (_?, nil): problems.append(ConfigurationProblem("tlsKey", "is required with tlsCert (--tls-key)"))
        case (nil, _?): problems.append(ConfigurationProblem("tlsCert", "is required with tlsKey (--tls-cert)"))
        case (nil, nil): break
        }
        file?.apply(to: &configuration)
        problems += configuration.problems()
        return (configuration, problems)
    }

    /// `--admin` parsed: a loopback address, and only with the embedded upstream.
    static func embeddedAdmin(_ options: Options, configuration: GatewayConfiguration) throws(CLIError)
        -> IngestListenAddress?
    {
        guard let text = options.admin, !text.isEmpty else { return nil }
        guard configuration.upstream == nil else {
            throw CLIError(.usage, "serve: --admin exposes the embedded upstream; it cannot be used with --upstream")
        }
        let address: IngestListenAddress
        do {
            address = try IngestListenAddress(parsing: text)
        } catch {
            throw CLIError(.usage, "serve: --admin: \(error.message)")
        }
        guard address.host == "::1" || address.host == "localhost" || address.host.hasPrefix("127.") else {
            throw CLIError(.usage, "serve: --admin must be a loopback address (127.0.0.1:PORT or [::1]:PORT)")
        }
        return address
    }

    static func readConfig(_ path: String) throws(GatewayError) -> ConfigurationFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GatewayError(.invalidConfiguration, "cannot read the config file \(path)")
        }
        return try ConfigurationFile(parsing: [UInt8](data))
    }

    static func run(arguments: [String], environment: [String: String], output: CommandLineOutput) async throws {
        guard let options = try parse(arguments, environment: environment) else {
            output.standardOutput(usage)
            return
        }
        let configuration = try configuration(options)
        let admin = try embeddedAdmin(options, configuration: configuration)
        let logger = GatewayLogger(level: configuration.policy.logLevel, droppedLines: output.droppedWrites) { line in
            output.standardError(line)
        }
        // Signals are taken over before anything starts: a SIGHUP or SIGTERM that arrives while the
        // gateway starts waits in the stream instead of killing the process with its default action.
        let signals = SignalStream([SIGTERM, SIGINT, SIGHUP])
        let system: GatewaySystem
        do {
            system = try await GatewaySystem.start(
                configuration, environment: GatewayEnvironment(logger: logger, version: PulseGateVersion.current),
                embeddedAdmin: admin)
        } catch {
            signals.cancel()
            throw CLIError(.runtime, "serve: the gateway could not start", underlying: error)
        }
        for await signal in signals.stream {
            if signal == SIGHUP {
                guard let path = options.configPath else {
                    reloadTLS(system.gateway, logger: logger)
                    if configuration.tls == nil { logger.info("SIGHUP without --config: nothing to reload") }
                    continue
                }
                reloadPolicy(system.gateway, options: options, path: path, logger: logger)
                reloadTLS(system.gateway, logger: logger)
                continue
            }
            logger.info("signal received, draining", ["signal": signal == SIGTERM ? "SIGTERM" : "SIGINT"])
            break
        }
        signals.cancel()
        await system.shutdown()
    }
}

extension ServeCommand {
    /// Re-reads the config file on SIGHUP: the whole resolved configuration must pass the checks
    /// of `pulsegate validate` (``resolve(_:)``; the TLS files are ``reloadTLS(_:logger:)``'s),
    /// then the file's policy keys apply over the current policy (a key absent from the file keeps
    /// its value). Otherwise every problem is logged and nothing changes.
    static func reloadPolicy(_ gateway: RunningGateway, options: Options, path: String, logger: GatewayLogger) {
        let problems = resolve(options).1.filter { $0.path != "tlsCert" && $0.path != "tlsKey" }
        do {
            guard problems.isEmpty else { throw GatewayError.invalidConfiguration(problems) }
            try gateway.reload(try readConfig(path).policy(from: gateway.policy))
        } catch {
            logger.error("config reload failed; keeping the previous settings", ["error": "\(error)"])
        }
    }

    /// Re-reads the TLS files on SIGHUP; a pair that cannot be used is logged and the previous one
    /// kept.
    static func reloadTLS(_ gateway: RunningGateway, logger: GatewayLogger) {
        do {
            try gateway.reloadTLS()
        } catch {
            logger.error("TLS reload failed; keeping the previous certificate", ["error": "\(error)"])
        }
    }
}

/// POSIX signals as an async sequence (Dispatch signal sources; the default actions are ignored
/// while it exists).
final class SignalStream {
    let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32]) {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        sources = signals.map { number in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(number) }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
    }
}
