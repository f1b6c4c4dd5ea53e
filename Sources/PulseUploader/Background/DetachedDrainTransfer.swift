import CPulseShims
import Foundation
public import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// The Linux ``BackgroundTransfer``: starts `pulsegate upload drain` as a detached process in its own
/// session (`setsid`), which sends what is due and exits — the counterpart of a WorkManager job.
///
/// The child outlives the app: it has its own session and process group, standard input is `/dev/null`, and
/// its output is appended to a log file in the data directory. Only one drain runs per queue at a time (the
/// drain takes an exclusive lock on `drain.lock`), so starting one while another runs is harmless.
public struct DetachedDrainTransfer: BackgroundTransfer {
    /// The `pulsegate` executable.
    public var executablePath: String
    /// The arguments after the executable, e.g. `["upload", "drain", "--data-dir", …]`.
    public var arguments: [String]
    /// The environment of the child; `nil` inherits this process's environment.
    public var environment: [String: String]?
    /// Where the child's standard output and error are appended; `nil` discards them.
    public var logPath: String?

    /// Creates a transfer that runs `executablePath arguments…`.
    public init(executablePath: String, arguments: [String], environment: [String: String]? = nil, logPath: String?) {
        self.executablePath = executablePath
        self.arguments = arguments
        self.environment = environment
        self.logPath = logPath
    }

    /// The path of the running executable (`/proc/self/exe` resolved), for a process that is `pulsegate` itself.
    public static var currentExecutablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    public func handOver(_ handOver: BackgroundHandOver) async throws(UploaderError) {
        _ = try spawn()
    }

    /// Starts the detached child and returns its process id. A thread of ours reaps it when it exits, so a
    /// long-lived parent leaves no zombie; if the parent exits first, init adopts the child.
    @discardableResult
    public func spawn() throws(UploaderError) -> Int32 {
        let argv = ([executablePath] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentPairs = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
        let envp = environmentPairs.map { strdup($0) } + [nil]
        defer { envp.forEach { free($0) } }

        var pid: pid_t = 0
        let status = pg_spawn_detached(executablePath, argv, envp, logPath, &pid)
        guard status == 0 else {
            throw UploaderError(
                .backgroundTransfer,
                "cannot start `\(executablePath)` for a background drain: \(String(cString: strerror(status)))")
        }
        let child = pid
        let reaper = Thread {
            var exitStatus: Int32 = 0
            while waitpid(child, &exitStatus, 0) == -1 && errno == EINTR {}
        }
        reaper.start()
        return pid
    }
}
