import Foundation
import Glibc

/// A throwaway PostgreSQL cluster for tests: `initdb` into a temporary folder, `pg_ctl start` on
/// a free loopback port, ``stop()``, ``start()`` again (an outage), ``remove()`` at the end.
///
/// PostgreSQL refuses to run as root: when the tests run as root (CI), the folder is given to
/// the `postgres` user and every server command runs through `runuser -u postgres --`. The
/// server binaries come from `pg_config --bindir` or the newest `/usr/lib/postgresql/*/bin`
/// (Debian's `postgresql` package; `scripts/test` installs it).
package final class PostgresCluster: Sendable {
    /// The folder holding the data directory, the socket and the server log.
    package let directory: String
    /// The loopback port the server listens on.
    package let port: Int
    private let binaries: String

    /// A connection URL for `database` as the superuser `postgres` (trust authentication).
    package func url(database: String = "postgres") -> String {
        "postgresql://postgres@127.0.0.1:\(port)/\(database)"
    }

    /// Creates and starts a cluster.
    ///
    /// - Parameter settings: extra `postgresql.conf` settings (`name = value` lines).
    package init(label: String = "pg", settings: [String] = []) async throws {
        guard let binaries = Self.binaryDirectory() else {
            throw TestClientError("no PostgreSQL server binaries (install the postgresql package)")
        }
        self.binaries = binaries
        directory = try ScratchDirectory(label).path
        guard let listener = LoopbackListener() else { throw TestClientError("no free port") }
        port = listener.port
        close(listener.descriptor)
        if getuid() == 0 {
            guard let user = getpwnam("postgres") else { throw TestClientError("no postgres user") }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        try await serverCommand(
            "initdb", ["-D", directory + "/data", "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"])
        let conf =
            [
                "listen_addresses = '127.0.0.1'", "port = \(port)", "unix_socket_directories = '\(directory)'",
                "max_connections = 200", "shared_buffers = 64MB",
            ] + settings
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/data/postgresql.conf"))
        handle.seekToEndOfFile()
        handle.write(Data(("\n" + conf.joined(separator: "\n") + "\n").utf8))
        try handle.close()
        try await start()
    }

    /// Runs `body` with a new cluster and removes the cluster afterwards, also when `body` throws.
    package static func with<T: Sendable>(
        label: String = "pg", settings: [String] = [], _ body: (PostgresCluster) async throws -> T
    ) async throws -> T {
        let cluster = try await PostgresCluster(label: label, settings: settings)
        do {
            let value = try await body(cluster)
            await cluster.remove()
            return value
        } catch {
            await cluster.remove()
            throw error
        }
    }

    /// Starts the server (again) and waits until it accepts connections.
    package func start() async throws {
        try await serverCommand(
            "pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "60", "start"])
    }

    /// Stops the server (`fast`: sessions are terminated, committed work is kept).
    package func stop() async throws {
        try await serverCommand("pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "-t", "60", "stop"])
    }

    /// Runs one SQL command with `psql` (as `postgres`), returning its unaligned output.
    @discardableResult
    package func psql(_ sql: String, database: String = "postgres") async throws -> String {
        try await run(
            binaries + "/psql",
            [
                "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database, "-X", "-A", "-t", "-q", "-c",
                sql,
            ],
            asPostgres: false)
    }

    /// Creates an empty database.
    package func createDatabase(_ name: String) async throws {
        try await psql("CREATE DATABASE \"\(name)\"")
    }

    /// Stops the server if it runs and deletes the folder.
    package func remove() async {
        _ = try? await serverCommand("pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func serverCommand(_ tool: String, _ arguments: [String]) async throws {
        _ = try await run(binaries + "/" + tool, arguments, asPostgres: true)
    }

    /// Runs a command to completion on a thread of its own; throws with its output on failure.
    private func run(_ executable: String, _ arguments: [String], asPostgres: Bool) async throws -> String {
        let process = Process()
        if asPostgres && getuid() == 0 {
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
            process.arguments = ["-u", "postgres", "--", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        // A file, not a pipe: the server that `pg_ctl start` leaves running would keep a pipe open.
        let outputPath = directory + "/command-" + UUID().uuidString + ".out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // waitpid on a thread of its own: Foundation's own reaping is not reliable for a child that
        // leaves a daemon behind (`pg_ctl start`).
        let pid = process.processIdentifier
        let waited = try await onThread { () -> Int32? in
            var status: Int32 = 0
            while true {
                if waitpid(pid, &status, 0) == pid { return status }
                if errno != EINTR { return nil }
            }
        }
        try output.close()
        let exitStatus: Int32
        if let waited {
            exitStatus = (waited & 0x7f) == 0 ? (waited >> 8) & 0xff : 128 + (waited & 0x7f)
        } else {
            await waitForChildExit(process)
            exitStatus = process.terminationStatus
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard exitStatus == 0 else {
            throw TestClientError("\((executable as NSString).lastPathComponent) failed: \(text)")
        }
        return text
    }

    private static func binaryDirectory() -> String? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted()
        for version in versions.reversed() {
            let candidate = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: candidate + "/initdb") { return candidate }
        }
        return nil
    }
}
