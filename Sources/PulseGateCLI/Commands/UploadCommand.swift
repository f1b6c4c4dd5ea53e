import Dispatch
import Foundation
import PulseJSON
import PulseKit
import PulseProtocol
import PulseUploader
import Synchronization

/// `pulsegate upload …`: the companion uploader on the command line.
enum UploadCommand {
    static let usage = """
        USAGE: pulsegate upload <subcommand> [options]

        SUBCOMMANDS:
          enqueue               Queue JSON-lines records from standard input (or --file); prints one
                                `ok <line> <record-id>` line per record once it is on disk, and
                                `ok <line> <record-id> crash <crash-id>` for a crash report (reuse the
                                crash id for the next attempt at the same crash). May run beside any other
                                subcommand.
          run                   Foreground loop: seal and send until SIGINT or SIGTERM.
          drain                 Background mode: seal everything, send what is due, exit.
          flush                 Seal everything and send every sealed batch now, oldest first, whatever the
                                conditions and backoff (Retry-After and 401/403 holds still apply). Exits 0
                                when the queue is empty afterwards, 3 when batches remain undelivered.
          background            The app moved to the background: seal and hand over to a detached drain
                                (or, with --transfer os, hand every due batch to curl started detached).
          settle                Settle the results of finished OS transfers (every subcommand does this
                                first, too).
          foreground            The app is in the foreground again: `run` resumes sending.
          status [--json]       Each policy value with its source, depth by class, oldest age, next
                                attempt, holds and endpoint backoff, drops by reason, recent errors,
                                diagnostics counters and the call log.
          consent grant|revoke  Grant consent, or withdraw it (drops the whole queue, stops collection).
          kill-switch on|off    Set or clear the kill switch (on drops the whole queue, stops collection).
          policy                Fetch the app's policy from the gateway (GET /v1/policy) and apply a newer one.

        EXIT STATUS:
          0 success; 1 runtime failure; 2 usage error; 3 `flush` left batches undelivered.

        Subcommands may run side by side on one data directory (enqueue beside a running sender
        included); a second `drain` stands back. See docs/uploader.md.

        OPTIONS:
          --endpoint URL        Gateway base URL (env PULSEGATE_ENDPOINT; default http://127.0.0.1:4318).
          --app-id ID           App ID sent as Apsio-App-Id and service.name (env PULSEGATE_APP_ID); required
                                by enqueue, run, drain, flush and background.
          --data-dir DIR        Queue folder (env PULSEGATE_DATA_DIR; default
                                $XDG_STATE_HOME/pulsegate/uploader or ~/.local/state/pulsegate/uploader).
          --device-id ID        Use this device.id instead of the one generated and kept in the data dir.
          --installation-id ID  Use this app.installation.id instead of the stored one.
          --app-version V       service.version.
          --encoding E          gzip (default) or zstd for new batches.
          --seal-interval-ms N  Foreground seal interval (default 10000).
          --diagnostics-level L none, batchSummaries (default), callDetails or callDetailsAndStackTraces.
                                A value given by flag wins over the gateway's policy; `status` shows each
                                value with its source (explicit > remote > configuration > default).
          --network STATE       Override: metered, unmetered or constrained (env PULSEGATE_NETWORK).
          --power STATE         Override: low or normal (env PULSEGATE_POWER).
          --file PATH           (enqueue) Read this file instead of standard input.
          --transfer MODE       How batches leave in the background (env PULSEGATE_TRANSFER): drain (default;
                                a detached `pulsegate upload drain`) or os (curl, started detached with the
                                exported batch files; the OS-run transfer: no Apsio-Sent-At). With os, crash
                                reports, attachments and large batches always take it.
          --no-background       Never hand over to a detached drain or transfer.

        """

    /// How batches leave in the background (`--transfer`).
    enum Transfer: String {
        /// A detached `pulsegate upload drain` (uploader code: `Apsio-Sent-At` is set).
        case drain
        /// `curl` started detached with the exported batches (``CurlProcessTransfer``).
        case os
    }

    /// Parsed common options.
    struct Options {
        var endpoint = "http://127.0.0.1:4318"
        var appId: String?
        var dataDirectory: String
        var deviceId: String?
        var installationId: String?
        var appVersion: String?
        var encoding: BodyEncoding?
        var sealIntervalMilliseconds: Int64?
        var diagnosticsLevel: DiagnosticsLevel?
        var network: DeliveryConditions.Network?
        var power: DeliveryConditions.Power?
        var file: String?
        var json = false
        var background = true
        var transfer = Transfer.drain
        var positional: [String] = []
        /// The options to pass on to a detached `pulsegate upload drain`.
        var forwarded: [String] = []
    }

    static func run(arguments: [String], environment: [String: String], output: CommandLineOutput) async throws {
        guard let subcommand = arguments.first, !["-h", "--help", "help"].contains(subcommand) else {
            output.standardOutput(usage)
            return
        }
        guard let options = try parse(Array(arguments.dropFirst()), environment: environment) else {
            output.standardOutput(usage)
            return
        }
        switch subcommand {
        case "enqueue":
            try requireNoPositional(options, subcommand)
            try await enqueue(options, environment: environment, output: output)
        case "run":
            try requireNoPositional(options, subcommand)
            try await runLoop(options, environment: environment, output: output)
        case "drain":
            try requireNoPositional(options, subcommand)
            try await withUploader(options, environment: environment, output: output, sending: true) { uploader in
                if let report = try await uploader.drain() {
                    output.standardOutput("drain: \(describe(report))\n")
                } else {
                    output.standardOutput("drain: another drain holds the queue; nothing to do\n")
                }
            }
        case "flush":
            try requireNoPositional(options, subcommand)
            try await withUploader(options, environment: environment, output: output, sending: true) { uploader in
                let report = try await uploader.flush()
                output.standardOutput("flush: \(describe(report))\n")
                if let remaining = report.remainingBatches, remaining > 0 {
                    throw CLIError(.undelivered, "\(remaining) batches remain undelivered")
                }
            }
        case "background":
            try requireNoPositional(options, subcommand)
            try await withUploader(options, environment: environment, output: output, sending: true) { uploader in
                if let handOver = try await uploader.enterBackground() {
                    if options.transfer == .os {
                        output.standardOutput(
                            "background: sealed; handed \(handOver.transferredBatches) of \(handOver.pendingBatches)"
                                + " batches to the OS transfer (curl)\n")
                    } else {
                        output.standardOutput(
                            "background: sealed; handed \(handOver.pendingBatches) batches to a background drain\n")
                    }
                } else {
                    output.standardOutput("background: sealed; nothing handed over\n")
                }
            }
        case "settle":
            try requireNoPositional(options, subcommand)
            try await withUploader(
                options, environment: environment, output: output, sending: false, settlesFirst: false
            ) { uploader in
                let transfer = osTransfer(options)
                let settled = try await transfer.settleFinished(on: uploader)
                let running =
                    (try? FileManager.default.contentsOfDirectory(atPath: transfer.exportDirectory))?
                    .filter { BatchLease(token: $0) != nil }.count ?? 0
                output.standardOutput("settle: \(describe(settled)); \(running) transfers still running\n")
            }
        case "foreground":
            try requireNoPositional(options, subcommand)
            try await withUploader(options, environment: environment, output: output, sending: false) { uploader in
                try await uploader.enterForeground()
                output.standardOutput("foreground: sending resumes in `pulsegate upload run`\n")
            }
        case "status":
            try requireNoPositional(options, subcommand)
            try await withUploader(options, environment: environment, output: output, sending: false) { uploader in
                let status = try await uploader.status()
                output.standardOutput(options.json ? statusJSON(status) : statusText(status))
            }
        case "consent":
            guard options.positional.count == 1, ["grant", "revoke"].contains(options.positional[0]) else {
                throw CLIError(.usage, "usage: pulsegate upload consent grant|revoke")
            }
            try await withUploader(options, environment: environment, output: output, sending: false) { uploader in
                if options.positional[0] == "grant" {
                    try await uploader.grantConsent()
                    output.standardOutput("consent granted\n")
                } else {
                    try await uploader.revokeConsent()
                    output.standardOutput("consent withdrawn; the queue was dropped\n")
                }
            }
        case "policy":
            try requireNoPositional(options, subcommand)
            try await withUploader(options, environment: environment, output: output, sending: true) { uploader in
                switch try await uploader.refreshPolicy() {
                case .applied(let revision):
                    output.standardOutput("policy: applied revision \(revision)\n")
                case .unchanged(let revision):
                    output.standardOutput("policy: revision \(revision) is current\n")
                case .rejected(let revision, let reason):
                    throw CLIError(.runtime, "policy revision \(revision) refused: \(reason)")
                case .unavailable(let status):
                    throw CLIError(
                        .runtime, "policy unavailable (\(status.map { "HTTP \($0)" } ?? "no response"))")
                }
            }
        case "kill-switch":
            guard options.positional.count == 1, ["on", "off"].contains(options.positional[0]) else {
                throw CLIError(.usage, "usage: pulsegate upload kill-switch on|off")
            }
            try await withUploader(options, environment: environment, output: output, sending: false) { uploader in
                try await uploader.setKillSwitch(options.positional[0] == "on")
                output.standardOutput("kill switch \(options.positional[0])\n")
            }
        default:
            throw CLIError(.usage, "unknown upload subcommand '\(subcommand)'")
        }
    }

    // MARK: - Parsing

    /// The flags every `upload` subcommand takes.
    static let flags: [Flag] = [
        .value("--endpoint", environment: "PULSEGATE_ENDPOINT"), .value("--app-id", environment: "PULSEGATE_APP_ID"),
        .value("--data-dir", environment: "PULSEGATE_DATA_DIR"), .value("--device-id"), .value("--installation-id"),
        .value("--app-version"), .value("--file"), .boolean("--json"), .boolean("--no-background"),
        .value("--transfer"), .value("--encoding"), .value("--seal-interval-ms"), .value("--diagnostics-level"),
        .value("--network"), .value("--power"),
    ]

    /// Parses a subcommand's flags and arguments; `nil` when help was asked for.
    static func parse(_ arguments: [String], environment: [String: String]) throws -> Options? {
        let parser = FlagParser(command: "upload", flags: flags, allowsPositional: true)
        guard let parsed = try parser.parseCommand(arguments, environment: environment) else { return nil }
        var options = Options(dataDirectory: parsed.value("--data-dir") ?? defaultDataDirectory(environment))
        options.endpoint = parsed.value("--endpoint") ?? options.endpoint
        options.appId = parsed.value("--app-id")
        options.deviceId = parsed.value("--device-id")
        options.installationId = parsed.value("--installation-id")
        options.appVersion = parsed.value("--app-version")
        options.file = parsed.value("--file")
        options.json = parsed.isSet("--json")
        options.background = !parsed.isSet("--no-background")
        options.positional = parsed.positional
        if let text = parsed.value("--transfer") {
            guard let mode = Transfer(rawValue: text) else { throw CLIError(.usage, "--transfer must be drain or os") }
            options.transfer = mode
        } else if let text = environment["PULSEGATE_TRANSFER"], let mode = Transfer(rawValue: text) {
            // An unknown value in the environment keeps the default, as it always has.
            options.transfer = mode
        }
        if let text = parsed.value("--encoding") {
            guard let encoding = BodyEncoding(rawValue: text) else {
                throw CLIError(.usage, "--encoding must be gzip or zstd")
            }
            options.encoding = encoding
        }
        if let text = parsed.value("--seal-interval-ms") {
            guard let number = Int64(text), number >= 0 else {
                throw CLIError(.usage, "--seal-interval-ms must be a non-negative integer")
            }
            options.sealIntervalMilliseconds = number
        }
        if let text = parsed.value("--diagnostics-level") {
            guard let level = DiagnosticsLevel(rawValue: text) else {
                throw CLIError(
                    .usage, "--diagnostics-level must be none, batchSummaries, callDetails or callDetailsAndStackTraces"
                )
            }
            options.diagnosticsLevel = level
        }
        if let text = parsed.value("--network") {
            guard let network = DeliveryConditions.Network(rawValue: text), network != .unknown else {
                throw CLIError(.usage, "--network must be metered, unmetered or constrained")
            }
            options.network = network
        }
        if let text = parsed.value("--power") {
            guard let power = DeliveryConditions.Power(rawValue: text), power != .unknown else {
                throw CLIError(.usage, "--power must be low or normal")
            }
            options.power = power
        }
        options.forwarded = ["--endpoint", options.endpoint, "--data-dir", options.dataDirectory]
        if let appId = options.appId { options.forwarded += ["--app-id", appId] }
        if let deviceId = options.deviceId { options.forwarded += ["--device-id", deviceId] }
        if let installationId = options.installationId { options.forwarded += ["--installation-id", installationId] }
        if let appVersion = options.appVersion { options.forwarded += ["--app-version", appVersion] }
        if let encoding = options.encoding { options.forwarded += ["--encoding", encoding.rawValue] }
        if let network = options.network { options.forwarded += ["--network", network.rawValue] }
        if let power = options.power { options.forwarded += ["--power", power.rawValue] }
        if let level = options.diagnosticsLevel { options.forwarded += ["--diagnostics-level", level.rawValue] }
        return options
    }

    static func defaultDataDirectory(_ environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return state + "/pulsegate/uploader"
        }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/pulsegate/uploader"
    }

    private static func requireNoPositional(_ options: Options, _ subcommand: String) throws {
        if let extra = options.positional.first {
            throw CLIError(.usage, "'upload \(subcommand)' takes no argument '\(extra)'")
        }
    }

    // MARK: - Uploader

    static func configuration(
        _ options: Options, environment: [String: String], sending: Bool, subcommandRuns: Bool = false
    ) throws -> UploaderConfiguration {
        let appId: String
        if let given = options.appId, !given.isEmpty {
            appId = given
        } else if sending {
            throw CLIError(.usage, "--app-id (or PULSEGATE_APP_ID) is required")
        } else {
            appId = "-"
        }
        var configuration = UploaderConfiguration(
            endpoint: options.endpoint, appId: appId, dataDirectory: options.dataDirectory)
        configuration.deviceId = options.deviceId
        configuration.installationId = options.installationId
        configuration.appVersion = options.appVersion
        // Flags are explicit: a remote policy does not replace them (see PolicySource).
        if let encoding = options.encoding {
            configuration.policy.encoding = encoding
            configuration.explicitPolicy.insert(.encoding)
        }
        if let interval = options.sealIntervalMilliseconds {
            configuration.policy.sealIntervalMilliseconds = interval
            configuration.explicitPolicy.insert(.sealIntervalMilliseconds)
        }
        if let level = options.diagnosticsLevel {
            configuration.policy.diagnosticsLevel = level
            configuration.explicitPolicy.insert(.diagnosticsLevel)
        }
        configuration.conditions = LinuxConditionsProvider(
            network: options.network, power: options.power, environment: environment)
        if subcommandRuns {
            configuration.policyRefreshIntervalMilliseconds = 600_000
        }
        if options.background && options.transfer == .os {
            configuration.outOfProcessTransfer = osTransfer(options)
        } else if options.background {
            configuration.backgroundTransfer = DetachedDrainTransfer(
                executablePath: DetachedDrainTransfer.currentExecutablePath,
                arguments: ["upload", "drain"] + options.forwarded + ["--no-background"],
                logPath: options.dataDirectory + "/drain.log")
        }
        return configuration
    }

    /// The curl transfer on this data directory (its exports live in `transfers/`).
    static func osTransfer(_ options: Options) -> CurlProcessTransfer {
        CurlProcessTransfer(exportDirectory: options.dataDirectory + "/transfers")
    }

    /// Opens the queue, settles what OS transfers finished since the last command, and runs `body`.
    private static func withUploader(
        _ options: Options, environment: [String: String], output: CommandLineOutput, sending: Bool,
        runs: Bool = false, settlesFirst: Bool = true, _ body: (Uploader) async throws -> Void
    ) async throws {
        let configuration = try configuration(
            options, environment: environment, sending: sending, subcommandRuns: runs)
        let uploader: Uploader
        do {
            uploader = try await Uploader(configuration: configuration)
        } catch {
            throw CLIError(.runtime, "cannot open the queue", underlying: error)
        }
        do {
            let settled = settlesFirst ? try await osTransfer(options).settleFinished(on: uploader) : []
            if !settled.isEmpty {
                output.standardError("pulsegate: settled \(describe(settled))\n")
            }
            try await body(uploader)
        } catch {
            try? await uploader.close()
            if error is CLIError { throw error }
            throw CLIError(.runtime, "upload failed", underlying: error)
        }
        try? await uploader.close()
    }

    // MARK: - enqueue

    /// How many records are committed concurrently (they share fsyncs through group commit).
    static let enqueueWindow = 64

    private static func enqueue(_ options: Options, environment: [String: String], output: CommandLineOutput)
        async throws
    {
        let lines: LineReader
        if let file = options.file {
            let descriptor = open(file, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw CLIError(.usage, "cannot open --file '\(file)'") }
            lines = LineReader(descriptor: descriptor, closesDescriptor: true)
        } else {
            lines = LineReader(descriptor: 0, closesDescriptor: false)
        }
        let outcome = EnqueueTally()
        try await withUploader(options, environment: environment, output: output, sending: true) { uploader in
            let decoder = RecordLineDecoder()
            await withTaskGroup(of: Void.self) { group in
                var inFlight = 0
                var lineNumber = 0
                for await line in lines.lines() {
                    lines.consumed()
                    lineNumber += 1
                    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                        continue  // blank lines are skipped, but still counted
                    }
                    let record: TelemetryRecord
                    do {
                        record = try decoder.decode(line, lineNumber: lineNumber)
                    } catch {
                        output.standardError("pulsegate: rejected \(Self.message(of: error))\n")
                        outcome.count.withLock { $0.rejected += 1 }
                        continue
                    }
                    if inFlight >= enqueueWindow {
                        await group.next()
                        inFlight -= 1
                    }
                    let number = lineNumber
                    inFlight += 1
                    group.addTask {
                        do {
                            let receipt = try await uploader.record(record)
                            output.standardOutput(
                                "ok \(number) \(receipt.recordId)\(receipt.crashId.map { " crash \($0)" } ?? "")\n")
                            outcome.count.withLock { $0.queued += 1 }
                        } catch {
                            output.standardError("pulsegate: rejected line \(number): \(Self.message(of: error))\n")
                            outcome.count.withLock { $0.rejected += 1 }
                        }
                    }
                }
            }
            if options.background {
                _ = try? await uploader.handOverDue(force: true)
            }
        }
        let (queued, rejected) = outcome.count.withLock { ($0.queued, $0.rejected) }
        output.standardError("pulsegate: queued \(queued) records, rejected \(rejected) lines\n")
        if rejected > 0 {
            throw CLIError(.runtime, "\(rejected) lines were rejected")
        }
    }

    private static func message(of error: any Error) -> String {
        (error as? UploaderError)?.message ?? "\(error)"
    }

    /// Counts of one `enqueue` run, shared by its tasks.
    private final class EnqueueTally: Sendable {
        let count = Mutex((queued: 0, rejected: 0))
    }

    // MARK: - run

    private static func runLoop(_ options: Options, environment: [String: String], output: CommandLineOutput)
        async throws
    {
        try await withUploader(options, environment: environment, output: output, sending: true, runs: true) {
            uploader in
            output.standardError(
                "pulsegate: uploading from \(options.dataDirectory) to \(options.endpoint); Ctrl-C to stop\n")
            let task = Task { try await uploader.run() }
            let stop = SignalWatcher(signals: [SIGINT, SIGTERM]) { task.cancel() }
            defer { stop.cancel() }
            try await task.value
            output.standardError("pulsegate: stopped\n")
        }
    }

    // MARK: - Output

    static func describe(_ report: SendReport) -> String {
        var text =
            "attempted \(report.attempted), delivered \(report.delivered) (duplicates \(report.duplicates)),"
            + " rejected \(report.rejected), retrying \(report.retrying), deferred \(report.deferred)"
        if report.partiallyRejectedRecords > 0 {
            text += ", records rejected in partial successes \(report.partiallyRejectedRecords)"
        }
        if report.authenticationHeld {
            text += ", held by 401/403 until the policy is refreshed"
        }
        if let blocked = report.blockedBy {
            text += ", blocked by \(blocked)"
        }
        if let remaining = report.remainingBatches {
            text += ", remaining \(remaining) batches"
        }
        if let next = report.nextAttemptMilliseconds {
            text += ", next attempt \(formatTime(next))"
        }
        return text
    }

    /// `N results: applied A (delivered …), superseded S, gone G`.
    static func describe(_ settlements: [TransferSettlement]) -> String {
        let applied = settlements.filter { $0.effect == .applied }
        var verdicts: [String] = []
        for verdict in TransferSettlement.Verdict.allCases {
            let count = applied.filter { $0.verdict == verdict }.count
            if count > 0 { verdicts.append("\(verdict.rawValue) \(count)") }
        }
        return "\(settlements.count) transfer results: applied \(applied.count)"
            + (verdicts.isEmpty ? "" : " (\(verdicts.joined(separator: ", ")))")
            + ", superseded \(settlements.filter { $0.effect == .superseded }.count),"
            + " gone \(settlements.filter { $0.effect == .gone }.count)"
    }

    static func formatTime(_ milliseconds: Int64) -> String {
        RFC3339.format(epochMilliseconds: milliseconds)
    }

    static func statusText(_ status: UploaderStatus) -> String {
        var lines: [String] = []
        lines.append("device.id \(status.deviceId), app.installation.id \(status.installationId)")
        lines.append(
            "consent \(status.consentGranted ? "granted" : "withdrawn"), kill switch \(status.killSwitch ? "on" : "off"),"
                + " state \(status.inBackground ? "background" : "foreground")")
        lines.append(
            "policy: revision \(status.policyRevision)"
                + (status.policyError.map { "; newest refused: \($0)" } ?? ""))
        lines.append("policy values (source: explicit > remote > configuration > default):")
        for setting in status.policySettings {
            lines.append(
                "  \(setting.name.padding(toLength: 31, withPad: " ", startingAt: 0)) \(setting.value.isEmpty ? "-" : setting.value)"
                    + " (\(setting.source.rawValue))")
        }
        lines.append("queue: \(status.totalRecords) records, \(status.totalBytes) bytes")
        for depth in status.classes {
            lines.append(
                "  \(depth.recordClass.description.padding(toLength: 10, withPad: " ", startingAt: 0))"
                    + " waiting \(depth.waitingRecords) records (\(depth.waitingBytes) B),"
                    + " sealed \(depth.batches) batches / \(depth.batchedRecords) records (\(depth.batchBytes) B)")
        }
        lines.append("oldest: \(status.oldestAgeMilliseconds.map { "\($0 / 1_000) s ago" } ?? "-")")
        lines.append("next attempt: \(status.nextAttemptMilliseconds.map(formatTime) ?? "-")")
        if let hold = status.retryAfterHoldUntilMilliseconds {
            lines.append("held by Retry-After until \(formatTime(hold))")
        }
        if let hold = status.authenticationHoldUntilMilliseconds {
            lines.append("held by 401/403 until \(formatTime(hold)) or a policy refresh")
        }
        if let hold = status.endpointBackoffUntilMilliseconds {
            lines.append("endpoint backs off until \(formatTime(hold)) after \(status.endpointFailures) failures")
        }
        if status.batchesWithTransfers > 0 {
            lines.append("with an OS transfer: \(status.batchesWithTransfers) batches (settled when they finish)")
        }
        lines.append("drops:")
        for reason in DropReason.allCases {
            let count = status.drops[reason]
            lines.append(
                "  \(reason.rawValue.padding(toLength: 18, withPad: " ", startingAt: 0)) \(count?.records ?? 0) records,"
                    + " \(count?.batches ?? 0) batches, \(count?.bytes ?? 0) B")
        }
        lines.append("recent errors:\(status.recentErrors.isEmpty ? " none" : "")")
        for error in status.recentErrors {
            lines.append(
                "  \(formatTime(error.atMilliseconds)) \(error.batchId ?? "-") \(error.status.map(String.init) ?? "-")"
                    + " \(error.message)")
        }
        let diagnostics = status.diagnostics
        lines.append(
            "diagnostics (this process at level \(status.diagnosticsLevel.rawValue); counting since \(formatTime(diagnostics.sessionStartedMilliseconds))):"
                + " last batch sequence \(diagnostics.lastSequence), attempted \(diagnostics.batchesAttempted),"
                + " sent ok \(diagnostics.batchesSentSuccessfully), with errors \(diagnostics.batchesWithErrors),"
                + " errors total \(diagnostics.totalErrors)")
        for error in diagnostics.errorHistory {
            lines.append(
                "  batch #\(error.batchNumber) \(error.domain) \(error.code): \(error.description)")
        }
        lines.append("calls:\(status.recentCalls.isEmpty ? " none (logged at callDetails and above)" : "")")
        for call in status.recentCalls {
            lines.append("  \(formatTime(call.atMilliseconds)) \(call.call) -> \(call.outcome)")
            for frame in call.stack ?? [] {
                lines.append("      \(frame)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func statusJSON(_ status: UploaderStatus) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("deviceId", status.deviceId)
        writer.field("installationId", status.installationId)
        writer.field("consentGranted", status.consentGranted)
        writer.field("killSwitch", status.killSwitch)
        writer.field("inBackground", status.inBackground)
        writer.field("policyRevision", status.policyRevision)
        writer.field("policyError", status.policyError)
        writer.field("totalRecords", status.totalRecords)
        writer.field("totalBytes", status.totalBytes)
        writer.field("oldestAgeMs", status.oldestAgeMilliseconds)
        writer.field("nextAttemptMs", status.nextAttemptMilliseconds)
        writer.field("retryAfterHoldUntilMs", status.retryAfterHoldUntilMilliseconds)
        writer.field("authenticationHoldUntilMs", status.authenticationHoldUntilMilliseconds)
        writer.field("endpointBackoffUntilMs", status.endpointBackoffUntilMilliseconds)
        writer.field("endpointFailures", status.endpointFailures)
        writer.field("batchesWithTransfers", status.batchesWithTransfers)
        writer.objects("policy", status.policySettings, named: \.name) { writer, setting in
            writer.field("value", setting.value)
            writer.field("source", setting.source.rawValue)
        }
        writer.objects("classes", status.classes, named: \.recordClass.description) { writer, depth in
            writer.field("waitingRecords", depth.waitingRecords)
            writer.field("waitingBytes", depth.waitingBytes)
            writer.field("batches", depth.batches)
            writer.field("batchedRecords", depth.batchedRecords)
            writer.field("batchBytes", depth.batchBytes)
        }
        writer.objects("drops", DropReason.allCases, named: \.rawValue) { writer, reason in
            let count = status.drops[reason]
            writer.field("records", count?.records ?? 0)
            writer.field("batches", count?.batches ?? 0)
            writer.field("bytes", count?.bytes ?? 0)
        }
        writer.objects("recentErrors", status.recentErrors) { writer, error in
            writer.field("atMs", error.atMilliseconds)
            writer.field("batchId", error.batchId)
            writer.field("status", error.status)
            writer.field("message", error.message)
        }
        let diagnostics = status.diagnostics
        writer.object("diagnostics") { writer in
            writer.field("level", status.diagnosticsLevel.rawValue)
            writer.field("sessionStartedMs", diagnostics.sessionStartedMilliseconds)
            writer.field("lastSequence", diagnostics.lastSequence)
            writer.field("batchesAttempted", diagnostics.batchesAttempted)
            writer.field("batchesSentOk", diagnostics.batchesSentSuccessfully)
            writer.field("batchesWithErrors", diagnostics.batchesWithErrors)
            writer.field("errorsTotal", diagnostics.totalErrors)
            writer.objects("errorHistory", diagnostics.errorHistory) { writer, error in
                writer.field("code", error.code)
                writer.field("domain", error.domain)
                writer.field("description", error.description)
                writer.field("batchNumber", error.batchNumber)
                writer.field("atMs", error.atMilliseconds)
            }
        }
        writer.objects("calls", status.recentCalls) { writer, call in
            writer.field("atMs", call.atMilliseconds)
            writer.field("call", call.call)
            writer.field("outcome", call.outcome)
            if let stack = call.stack { writer.strings("stack", stack) }
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self) + "\n"
    }
}
