import Foundation
import PulseGateway
import PulseKit

/// `pulsegate outbox`: outbox depth and age per app, dead letters, requeue.
enum OutboxCommand {
    static let usage = """
        USAGE: pulsegate outbox [--data-dir DIR | --store URL] [status | dead-letters [--limit N] | requeue (--all | SEQ...)]

        Reads the gateway's database (it may be running: SQLite WAL allows it).
          status          Outbox batches, records, bytes and oldest age per app, and dead letters (default).
          dead-letters    Lists parked batches with the upstream's code and message, oldest first.
          requeue         Moves dead letters back into the outbox (keeping their FIFO place); a running
                          gateway picks them up on its next outbox scan.

        OPTIONS:
          --data-dir DIR  The gateway's data directory (PULSEGATE_DATA_DIR; default ./pulsegate-data).
          --store URL     A fleet's PostgreSQL store instead (PULSEGATE_STORE; docs/fleet.md).
          -h, --help      Show this help.

        """

    static func run(
        arguments: [String], environment: [String: String], output: CommandLineOutput,
        now: Int64 = PulseClock.system.wallClockMilliseconds()
    ) async throws {
        let parser = FlagParser(
            command: "outbox",
            flags: [
                .value("--data-dir", environment: "PULSEGATE_DATA_DIR"),
                .value("--store", environment: "PULSEGATE_STORE"),
                .value("--limit"), .boolean("--all"),
            ],
            allowsPositional: true)
        guard let parsed = try parser.parseCommand(arguments, environment: environment) else {
            output.standardOutput(usage)
            return
        }
        let dataDirectory = parsed.value("--data-dir") ?? "pulsegate-data"
        let storeURL = parsed.value("--store")
        let limit = try withUsageErrors { () throws(UsageError) in
            try parsed.integer("--limit", in: 1...Int.max, command: "outbox") ?? 100
        }
        let all = parsed.isSet("--all")
        let positional = parsed.positional
        let action = positional.first ?? "status"
        let rest = Array(positional.dropFirst())
        guard ["status", "dead-letters", "requeue"].contains(action) else {
            throw CLIError(.usage, "outbox: unknown action '\(action)'")
        }
        var seqs: [Int64] = []
        for text in rest {
            guard action == "requeue", let seq = Int64(text) else {
                throw CLIError(.usage, "outbox: unexpected argument '\(text)'")
            }
            seqs.append(seq)
        }
        if action == "requeue" && seqs.isEmpty && !all {
            throw CLIError(.usage, "outbox: requeue needs --all or sequence numbers")
        }
        let store: any GatewayOutboxAdministration
        do {
            if let storeURL {
                store = try await PostgresGatewayStore.open(url: storeURL)
            } else {
                guard FileManager.default.fileExists(atPath: dataDirectory + "/" + GatewayStore.fileName) else {
                    throw CLIError(.runtime, "outbox: no gateway database in \(dataDirectory)")
                }
                store = try await GatewayStore.open(dataDirectory: dataDirectory)
            }
        } catch let error as CLIError {
            throw error
        } catch {
            throw CLIError(.runtime, "outbox: cannot open the database", underlying: error)
        }
        defer { Task { try? await store.close() } }
        switch action {
        case "status":
            let summaries = try await store.appSummaries()
            var lines = [["APP", "BATCHES", "RECORDS", "BYTES", "OLDEST AGE", "DEAD LETTERS"]]
            for summary in summaries {
                lines.append([
                    summary.app, String(summary.batches), String(summary.records), String(summary.bytes),
                    summary.batches > 0 ? age(now - summary.oldestCreatedAt) : "-", String(summary.deadLetters),
                ])
            }
            output.standardOutput(summaries.isEmpty ? "outbox empty, no dead letters\n" : table(lines))
        case "dead-letters":
            let letters = try await store.deadLetters(limit: limit)
            var lines = [["SEQ", "APP", "KIND", "RECORDS", "ATTEMPTS", "CODE", "HTTP BATCH", "PULSE BATCH", "MESSAGE"]]
            for letter in letters {
                lines.append([
                    String(letter.seq), letter.app, letter.kind.description, String(letter.recordCount),
                    String(letter.attempts), String(letter.code), letter.httpBatchID, letter.pulseBatchID,
                    letter.message,
                ])
            }
            output.standardOutput(letters.isEmpty ? "no dead letters\n" : table(lines))
        default:
            let moved = try await store.requeue(seqs: all ? nil : seqs, now: now)
            output.standardOutput("requeued \(moved) batch\(moved == 1 ? "" : "es")\n")
        }
        try await store.close()
    }

    static func age(_ milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1000)
        if seconds < 120 { return "\(seconds)s" }
        if seconds < 7200 { return "\(seconds / 60)m" }
        if seconds < 172_800 { return "\(seconds / 3600)h" }
        return "\(seconds / 86_400)d"
    }

    static func table(_ rows: [[String]]) -> String {
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n"
    }
}
