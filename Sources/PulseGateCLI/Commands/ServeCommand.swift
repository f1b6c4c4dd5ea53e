import Dispatch
import Foundation
import PulseGateway

/// `pulsegate serve`: runs the gateway until SIGTERM or SIGINT; SIGHUP reloads the config file.
enum ServeCommand {
    static let usage = """
        USAGE: pulsegate serve [--listen HOST:PORT] [--upstream HOST:PORT] [--data-dir DIR] [--store URL]
                               [--config FILE]

        Runs the OTLP/HTTP gateway. Without --upstream it starts the reference Pulse ingest server
        in-process on loopback and forwards there.

        OPTIONS (each also read from an environment variable; the flag wins, then the variable,
        then the config file, then the default):
          --listen HOST:PORT     HTTP listen address      PULSEGATE_LISTEN     default 127.0.0.1:4318
          --upstream HOST:PORT   Pulse upstream (msgtrans) PULSEGATE_UPSTREAM   default: embedded
          --data-dir DIR         database directory       PULSEGATE_DATA_DIR   default ./pulsegate-data
          --store URL            PostgreSQL store (fleet) PULSEGATE_STORE      default: SQLite in --data-dir
          --config FILE          JSON config file         PULSEGATE_CONFIG     (docs/operations.md)
          -h, --help             Show this help.

        SIGNALS: SIGTERM/SIGINT drain and stop (the outbox is kept); SIGHUP reloads the config
        file's policy (allowed apps, app keys, default app, retention, outbox caps,
        log level).
        Logs: one JSON object per line on standard error; a line that cannot be written is dropped
        and counted (pulsegate_log_lines_dropped_total), never fatal.
        The data directory is locked (pulsegate.lock) while serve runs: a second process on it
        exits with status 1 naming the holder's pid.

        """

    /// The resolved command line.
    struct Options: Equatable {
        var listen: String?
        var upstream: String?
        var dataDirectory: String?
        var configPath: String?
        var store: String?
    }

    /// Parses flags, falling back to the environment; `nil` when help was asked for.
    static func parse(_ arguments: [String], environment: [String: String]) throws(CLIError) -> Options? {
        var options = Options(
            listen: environment["PULSEGATE_LISTEN"], upstream: environment["PULSEGATE_UPSTREAM"],
            dataDirectory: environment["PULSEGATE_DATA_DIR"], configPath: environment["PULSEGATE_CONFIG"],
            store: environment["PULSEGATE_STORE"])
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "-h" || argument == "--help" { return nil }
            var name = argument
            var value: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                name = String(argument[..<equals])
                value = String(argument[argument.index(after: equals)...])
            }
            guard ["--listen", "--upstream", "--data-dir", "--config", "--store"].contains(name) else {
                throw CLIError(.usage, "serve: unknown option '\(argument)'")
            }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw CLIError(.usage, "serve: \(name) needs a value") }
                value = arguments[index]
            }
            switch name {
            case "--listen": options.listen = value
            case "--upstream": options.upstream = value
            case "--data-dir": options.dataDirectory = value
            case "--store": options.store = value
            default: options.configPath = value
            }
            index += 1
        }
        return options
    }

    /// Builds the gateway configuration: flags/environment over the config file over defaults.
    static func configuration(_ options: Options) throws(CLIError) -> GatewayConfiguration {
        do {
            let file = try options.configPath.map { path throws(GatewayError) in try readConfig(path) }
            let dataDirectory = options.dataDirectory ?? file?.dataDirectory ?? "pulsegate-data"
            var configuration = GatewayConfiguration(dataDirectory: dataDirectory)
            if let listen = options.listen ?? file?.listen {
                let (host, port) = try GatewayConfiguration.parseListen(listen)
                configuration.listenHost = host
                configuration.listenPort = port
            }
            if let upstream = options.upstream ?? file?.upstream, !upstream.isEmpty {
                configuration.upstream = try UpstreamAddress(parsing: upstream)
            }
            if let store = options.store ?? file?.store, !store.isEmpty {
                configuration.store = store
            }
            file?.apply(to: &configuration)
            try configuration.validate()
            return configuration
        } catch {
            throw CLIError(.usage, "serve: \(error.message)")
        }
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
        let logger = GatewayLogger(level: configuration.policy.logLevel, droppedLines: output.droppedWrites) { line in
            output.standardError(line)
        }
        // Signals are taken over before anything starts: a SIGHUP or SIGTERM that arrives while the
        // gateway starts waits in the stream instead of killing the process with its default action.
        let signals = SignalStream([SIGTERM, SIGINT, SIGHUP])
        let system: GatewaySystem
        do {
            system = try await GatewaySystem.start(configuration, environment: GatewayEnvironment(logger: logger))
        } catch {
            signals.cancel()
            throw CLIError(.runtime, "serve: the gateway could not start", underlying: error)
        }
        for await signal in signals.stream {
            if signal == SIGHUP {
                guard let path = options.configPath else {
                    logger.info("SIGHUP without --config: nothing to reload")
                    continue
                }
                do {
                    try system.gateway.reload(try readConfig(path).policy(from: system.gateway.policy))
                } catch {
                    logger.error("config reload failed; keeping the previous settings", ["error": "\(error)"])
                }
                continue
            }
            logger.info("signal received, draining", ["signal": signal == SIGTERM ? "SIGTERM" : "SIGINT"])
            break
        }
        signals.cancel()
        await system.shutdown()
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
