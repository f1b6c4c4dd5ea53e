public import Foundation
import Synchronization

/// Conditions on Linux: NetworkManager's metered state and the battery in `/sys/class/power_supply`, with
/// overrides.
///
/// - Network: `nmcli -t -f GENERAL.METERED dev show` (any device reporting `yes` or `yes (guessed)` means
///   metered); without `nmcli`, or when it fails, the network is `unknown`.
/// - Power: the first `BAT*` supply; `low` when its `status` is `Discharging` and `capacity` ≤ 20. Without a
///   battery, `unknown`.
/// - Overrides win over probes: the initializer's `network`/`power` arguments (the CLI's `--network` and
///   `--power` flags), then the environment variables `PULSEGATE_NETWORK` (`metered`, `unmetered`,
///   `constrained`) and `PULSEGATE_POWER` (`low`, `normal`).
///
/// Probe results are cached for ``cacheMilliseconds``, so asking before every upload round is cheap.
public final class LinuxConditionsProvider: ConditionsProvider {
    /// How long a probe result is reused (default 30 s).
    public let cacheMilliseconds: Int64
    private let networkOverride: DeliveryConditions.Network?
    private let powerOverride: DeliveryConditions.Power?
    private let powerSupplyDirectory: String
    private let nmcliPath: String?
    private let clock: UploaderClock
    private let cache = Mutex<(at: Int64, conditions: DeliveryConditions)?>(nil)

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - network: forces the network state (wins over the environment).
    ///   - power: forces the power state (wins over the environment).
    ///   - environment: where `PULSEGATE_NETWORK` and `PULSEGATE_POWER` are read.
    ///   - powerSupplyDirectory: the sysfs power-supply folder (a fixture folder in tests).
    ///   - nmcliPath: the `nmcli` executable; `nil` looks it up on `PATH` (and skips the probe when missing).
    ///   - clock: for the cache.
    ///   - cacheMilliseconds: how long a probe result is reused.
    public init(
        network: DeliveryConditions.Network? = nil, power: DeliveryConditions.Power? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        powerSupplyDirectory: String = "/sys/class/power_supply", nmcliPath: String? = nil,
        clock: UploaderClock = .system, cacheMilliseconds: Int64 = 30_000
    ) {
        self.networkOverride =
            network
            ?? environment["PULSEGATE_NETWORK"].flatMap { DeliveryConditions.Network(rawValue: $0.lowercased()) }
        self.powerOverride =
            power ?? environment["PULSEGATE_POWER"].flatMap { DeliveryConditions.Power(rawValue: $0.lowercased()) }
        self.powerSupplyDirectory = powerSupplyDirectory
        self.nmcliPath = nmcliPath ?? LinuxConditionsProvider.findExecutable("nmcli", path: environment["PATH"])
        self.clock = clock
        self.cacheMilliseconds = cacheMilliseconds
    }

    public func currentConditions() async -> DeliveryConditions {
        let now = clock.nowMilliseconds()
        if let cached = cache.withLock({ $0 }), now - cached.at < cacheMilliseconds, now >= cached.at {
            return cached.conditions
        }
        // The probes read files and run `nmcli`: do it on a thread of our own, not the cooperative pool.
        let conditions = await withCheckedContinuation {
            (continuation: CheckedContinuation<DeliveryConditions, Never>) in
            let thread = Thread { [self] in
                continuation.resume(returning: probe())
            }
            thread.start()
        }
        cache.withLock { $0 = (now, conditions) }
        return conditions
    }

    /// Probes synchronously (blocking), applying the overrides.
    func probe() -> DeliveryConditions {
        DeliveryConditions(network: networkOverride ?? probeNetwork(), power: powerOverride ?? probePower())
    }

    // MARK: - Power

    /// Reads the first battery's state.
    func probePower() -> DeliveryConditions.Power {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: powerSupplyDirectory) else {
            return .unknown
        }
        for entry in entries.sorted() where entry.hasPrefix("BAT") {
            let base = powerSupplyDirectory + "/" + entry
            guard let status = readTrimmed(base + "/status") else { continue }
            let capacity = readTrimmed(base + "/capacity").flatMap { Int($0) }
            return LinuxConditionsProvider.power(status: status, capacity: capacity)
        }
        return .unknown
    }

    /// The power state for a battery `status` and `capacity` (percent).
    static func power(status: String, capacity: Int?) -> DeliveryConditions.Power {
        if status.lowercased() == "discharging", let capacity, capacity <= 20 {
            return .low
        }
        return .normal
    }

    private func readTrimmed(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // MARK: - Network

    /// Asks NetworkManager whether any device is on a metered connection.
    func probeNetwork() -> DeliveryConditions.Network {
        guard let nmcliPath else { return .unknown }
        guard let output = LinuxConditionsProvider.run(nmcliPath, ["-t", "-f", "GENERAL.METERED", "dev", "show"])
        else { return .unknown }
        return LinuxConditionsProvider.network(nmcliOutput: output)
    }

    /// Interprets `nmcli -t -f GENERAL.METERED dev show` output (`GENERAL.METERED:yes (guessed)` lines).
    static func network(nmcliOutput: String) -> DeliveryConditions.Network {
        var sawAny = false
        for line in nmcliOutput.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces).lowercased()
            guard !value.isEmpty else { continue }
            sawAny = true
            if value.hasPrefix("yes") {
                return .metered
            }
        }
        return sawAny ? .unmetered : .unknown
    }

    /// Runs a short probe with a deadline; `nil` when it fails or takes longer than two seconds.
    private static func run(_ executable: String, _ arguments: [String]) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let finished = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in finished.signal() }
        do {
            try process.run()
        } catch {
            return nil
        }
        // The output is a few lines, well under a pipe's buffer, so waiting before reading cannot deadlock; a
        // probe that hangs is abandoned.
        if finished.wait(timeout: .now() + 2) == .timedOut {
            process.terminate()
            return nil
        }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    static func findExecutable(_ name: String, path: String?) -> String? {
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for directory in directories {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        return nil
    }
}
