import Dispatch
import PulseIngest
import PulseProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// `pulsegate ingest`: runs the reference Pulse ingest server until SIGTERM or SIGINT.
///
/// SIGHUP re-reads `--config`: apps whose policy changed get a higher revision and their
/// connected clients a `config.invalidate` control RPC.
enum IngestCommand {
    static let usage = """
        USAGE: pulsegate ingest [options]
               pulsegate ingest validate --config FILE   (check a config file, exit 0 or 1)

        Runs the reference Pulse ingest server: Pulse clients connect over msgtrans, batches are
        stored durably in SQLite before they are acknowledged.

        OPTIONS:
          --listen HOST:PORT   msgtrans address (default 127.0.0.1:6000)     [PULSEGATE_INGEST_LISTEN]
          --data-dir DIR       directory of ingest.sqlite (default ./pulsegate-ingest)
                                                                              [PULSEGATE_INGEST_DATA_DIR]
          --config FILE        allowed apps, packages, policy snapshots and releases (JSON, see
                               docs/ingest.md); without it every app is accepted
                                                                              [PULSEGATE_INGEST_CONFIG]
          --admin HOST:PORT    admin HTTP endpoint: GET /stats, /metrics, /events?app=…&limit=…,
                               /crashes, /connections, POST /control (default: none)
                                                                              [PULSEGATE_INGEST_ADMIN]
          --connect-deadline-ms N
                               a connection that has not completed CLIENT_CONNECT within N ms is
                               closed (default 10000)          [PULSEGATE_INGEST_CONNECT_DEADLINE_MS]
          --max-partial-frame-bytes N
                               bytes of unfinished frames held across all connections; the
                               connection whose read goes over is closed (default 268435456)
                                                       [PULSEGATE_INGEST_MAX_PARTIAL_FRAME_BYTES]
          -h, --help           Show this help.

        SIGNALS: SIGTERM/SIGINT shut down gracefully; SIGHUP reloads --config.
        The data directory is locked (pulsegate.lock) while the server runs: a second process on
        it exits with status 1 naming the holder's pid.

        """

    /// Parsed options.
    struct Options: Equatable {
        var listen = IngestConfiguration.defaultListen
        var dataDirectory = "pulsegate-ingest"
        var configPath: String?
        var admin: IngestListenAddress?
        /// `--connect-deadline-ms`; nil keeps ``IngestConfiguration/connectDeadline``'s default.
        var connectDeadlineMilliseconds: Int?
        /// `--max-partial-frame-bytes`; nil keeps the transport's default.
        var maxPartialFrameBytes: Int?
    }

    /// A signal the running command reacts to.
    enum Signal: Sendable {
        case terminate
        case reload
    }

    /// Runs the command with the process's signals.
    static func run(arguments: [String], environment: [String: String], output: CommandLineOutput) async throws {
        if arguments.first == "validate" {
            try ValidateCommand.runIngest(
                arguments: Array(arguments.dropFirst()), environment: environment, output: output)
            return
        }
        if arguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
            output.standardOutput(usage)
            return
        }
        let options = try parse(arguments: arguments, environment: environment)
        let signals = ProcessSignals()
        defer { signals.cancel() }
        try await run(options: options, output: output, signals: signals.stream)
    }

    /// Parses flags; each falls back to its environment variable, then to its default.
    static func parse(arguments: [String], environment: [String: String]) throws(CLIError) -> Options {
        var values: [String: String] = [:]
        let flags = [
            "--listen": "PULSEGATE_INGEST_LISTEN", "--data-dir": "PULSEGATE_INGEST_DATA_DIR",
            "--config": "PULSEGATE_INGEST_CONFIG", "--admin": "PULSEGATE_INGEST_ADMIN",
            "--connect-deadline-ms": "PULSEGATE_INGEST_CONNECT_DEADLINE_MS",
            "--max-partial-frame-bytes": "PULSEGATE_INGEST_MAX_PARTIAL_FRAME_BYTES",
        ]
        for (flag, variable) in flags {
            if let value = environment[variable], !value.isEmpty {
                values[flag] = value
            }
        }
        var index = 0
        while index < arguments.count {
            var argument = arguments[index]
            var inlineValue: String?
            if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
                inlineValue = String(argument[argument.index(after: equals)...])
                argument = String(argument[..<equals])
            }
            guard flags[argument] != nil else {
                throw CLIError(.usage, "ingest: unknown argument '\(argument)'")
            }
            if let inlineValue {
                values[argument] = inlineValue
            } else {
                guard index + 1 < arguments.count else {
                    throw CLIError(.usage, "ingest: \(argument) needs a value")
                }
                index += 1
                values[argument] = arguments[index]
            }
            index += 1
        }
        var options = Options()
        do {
            if let listen = values["--listen"] {
                options.listen = try IngestListenAddress(parsing: listen)
            }
            if let admin = values["--admin"] {
                options.admin = try IngestListenAddress(parsing: admin)
            }
        } catch {
            throw CLIError(.usage, "ingest: \(error.message)")
        }
        if let directory = values["--data-dir"] {
            guard !directory.isEmpty else { throw CLIError(.usage, "ingest: --data-dir is empty") }
            options.dataDirectory = directory
        }
        options.configPath = values["--config"]
        options.connectDeadlineMilliseconds = try positiveInteger(values, "--connect-deadline-ms")
        options.maxPartialFrameBytes = try positiveInteger(values, "--max-partial-frame-bytes")
        return options
    }

    /// A flag's value as a whole number of at least 1 (nil when the flag was not given).
    private static func positiveInteger(_ values: [String: String], _ flag: String) throws(CLIError) -> Int? {
        guard let text = values[flag] else { return nil }
        guard let value = Int(text), value > 0 else {
            throw CLIError(.usage, "ingest: \(flag) takes a whole number of at least 1, not '\(text)'")
        }
        return value
    }

    /// Starts the server and serves until a terminate signal arrives.
    static func run(
        options: Options, output: CommandLineOutput, signals: AsyncStream<Signal>,
        started: @Sendable (IngestServer) -> Void = { _ in }
    ) async throws {
        let policy: IngestPolicy
        do {
            policy =
                try options.configPath.map { path throws(IngestError) in try IngestPolicy.load(path: path) }
                ?? .acceptingEveryApp
        } catch {
            throw CLIError(.runtime, "ingest: cannot load the config", underlying: error)
        }
        if options.configPath == nil {
            output.standardError("pulsegate ingest: no --config given: accepting every app and package\n")
        }
        var configuration = IngestConfiguration(dataDirectory: options.dataDirectory, policy: policy)
        configuration.listen = options.listen
        configuration.admin = options.admin
        configuration.policyFile = options.configPath
        configuration.droppedLogLines = output.droppedWrites
        configuration.version = PulseGateVersion.current
        if let milliseconds = options.connectDeadlineMilliseconds {
            configuration.connectDeadline = .milliseconds(milliseconds)
        }
        if let bytes = options.maxPartialFrameBytes {
            configuration.transport.maxPartialFrameBytes = bytes
        }
        let server: IngestServer
        do {
            server = try await IngestServer.start(configuration)
        } catch {
            throw CLIError(.runtime, "ingest: cannot start", underlying: error)
        }
        var line = "pulsegate ingest: listening on \(server.localAddress) (msgtrans)"
        if let adminPort = server.adminPort, let admin = options.admin {
            line += ", admin on http://\(IngestListenAddress(host: admin.host, port: adminPort))"
        }
        output.standardOutput(line + ", data in \(options.dataDirectory)\n")
        started(server)
        for await signal in signals {
            switch signal {
            case .terminate:
                output.standardOutput("pulsegate ingest: shutting down\n")
                await server.shutdown()
                output.standardOutput("pulsegate ingest: stopped\n")
                return
            case .reload:
                await reload(server, options: options, output: output)
            }
        }
        await server.shutdown()
    }

    private static func reload(_ server: IngestServer, options: Options, output: CommandLineOutput) async {
        guard let path = options.configPath else {
            output.standardError("pulsegate ingest: SIGHUP ignored: no --config to reload\n")
            return
        }
        do {
            let changed = try await server.reloadPolicyFile()
            output.standardOutput(
                "pulsegate ingest: reloaded \(path); new revisions for: "
                    + (changed.isEmpty ? "none" : changed.joined(separator: ", ")) + "\n")
        } catch {
            output.standardError("pulsegate ingest: reload failed, keeping the previous config: \(error)\n")
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP as an async stream, through dispatch signal sources.
private final class ProcessSignals {
    let stream: AsyncStream<IngestCommand.Signal>
    private let sources: [any DispatchSourceSignal]

    init() {
        let (stream, continuation) = AsyncStream.makeStream(of: IngestCommand.Signal.self)
        self.stream = stream
        let mapping: [(Int32, IngestCommand.Signal)] = [(SIGTERM, .terminate), (SIGINT, .terminate), (SIGHUP, .reload)]
        sources = mapping.map { number, signal in
            Glibc.signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield(signal) }
            source.resume()
            return source
        }
    }

    /// Stops listening; the default dispositions are not restored (the process is about to exit).
    func cancel() {
        for source in sources {
            source.cancel()
        }
    }
}
