import Dispatch
import MsgTransRuntime
import PulseIngest
import PulseKit
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
        guard let options = try parse(arguments: arguments, environment: environment) else {
            output.standardOutput(usage)
            return
        }
        let signals = ProcessSignals()
        defer { signals.cancel() }
        try await run(options: options, output: output, signals: signals.stream)
    }

    /// The flags `ingest` takes, each with its environment variable.
    static let flags: [Flag] = [
        .value("--listen", environment: "PULSEGATE_INGEST_LISTEN"),
        .value("--data-dir", environment: "PULSEGATE_INGEST_DATA_DIR"),
        .value("--config", environment: "PULSEGATE_INGEST_CONFIG"),
        .value("--admin", environment: "PULSEGATE_INGEST_ADMIN"),
        .value("--connect-deadline-ms", environment: "PULSEGATE_INGEST_CONNECT_DEADLINE_MS"),
        .value("--max-partial-frame-bytes", environment: "PULSEGATE_INGEST_MAX_PARTIAL_FRAME_BYTES"),
    ]

    /// Parses flags; each falls back to its environment variable, then to its default. `nil` when
    /// help was asked for.
    static func parse(arguments: [String], environment: [String: String]) throws(CLIError) -> Options? {
        guard
            let parsed = try FlagParser(command: "ingest", flags: flags).parseCommand(
                arguments, environment: environment)
        else { return nil }
        var options = Options()
        do {
            if let listen = parsed.value("--listen") {
                options.listen = try IngestListenAddress(parsing: listen)
            }
            if let admin = parsed.value("--admin") {
                options.admin = try IngestListenAddress(parsing: admin)
            }
        } catch {
            throw CLIError(.usage, "ingest: \(error.message)")
        }
        if let directory = parsed.value("--data-dir") {
            guard !directory.isEmpty else { throw CLIError(.usage, "ingest: --data-dir is empty") }
            options.dataDirectory = directory
        }
        options.configPath = parsed.value("--config")
        try withUsageErrors { () throws(UsageError) in
            options.connectDeadlineMilliseconds = try parsed.integer(
                "--connect-deadline-ms", in: 1...Int.max, command: "ingest")
            options.maxPartialFrameBytes = try parsed.integer(
                "--max-partial-frame-bytes", in: 1...Int.max, command: "ingest")
        }
        return options
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
