import Foundation
import PulseTestSupport
import Testing

@testable import PulseUploader

@Suite struct ConditionsTests {
    func powerSupply(_ entries: [String: [String: String]]) throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory()
        for (name, files) in entries {
            let folder = directory.path + "/" + name
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (file, content) in files {
                try Data((content + "\n").utf8).write(to: URL(fileURLWithPath: folder + "/" + file))
            }
        }
        return directory
    }

    func provider(
        _ directory: TemporaryDirectory, environment: [String: String] = [:], power: DeliveryConditions.Power? = nil
    )
        -> LinuxConditionsProvider
    {
        // An empty PATH: no nmcli, so the network is unknown unless overridden.
        LinuxConditionsProvider(
            power: power, environment: environment.merging(["PATH": "/nonexistent"]) { a, _ in a },
            powerSupplyDirectory: directory.path)
    }

    @Test func aDischargingBatteryAtTwentyPercentIsLowPower() async throws {
        let low = try powerSupply(["AC": ["online": "0"], "BAT0": ["status": "Discharging", "capacity": "20"]])
        #expect(await provider(low).currentConditions() == DeliveryConditions(network: .unknown, power: .low))
        let charging = try powerSupply(["BAT0": ["status": "Charging", "capacity": "5"]])
        #expect(await provider(charging).currentConditions().power == .normal)
        let plenty = try powerSupply(["BAT1": ["status": "Discharging", "capacity": "21"]])
        #expect(await provider(plenty).currentConditions().power == .normal)
        let none = try powerSupply(["AC": ["online": "1"]])
        #expect(await provider(none).currentConditions().power == .unknown)
    }

    @Test func flagsWinOverEnvironmentWhichWinsOverProbes() async throws {
        let low = try powerSupply(["BAT0": ["status": "Discharging", "capacity": "3"]])
        let fromEnvironment = provider(low, environment: ["PULSEGATE_POWER": "normal", "PULSEGATE_NETWORK": "metered"])
        #expect(await fromEnvironment.currentConditions() == DeliveryConditions(network: .metered, power: .normal))
        let fromFlag = provider(low, environment: ["PULSEGATE_POWER": "normal"], power: .low)
        #expect(await fromFlag.currentConditions().power == .low)
    }

    @Test func nmcliOutputIsReadForTheMeteredState() {
        #expect(
            LinuxConditionsProvider.network(nmcliOutput: "GENERAL.METERED:no\nGENERAL.METERED:yes (guessed)\n")
                == .metered)
        #expect(
            LinuxConditionsProvider.network(nmcliOutput: "GENERAL.METERED:no (guessed)\nGENERAL.METERED:unknown\n")
                == .unmetered)
        #expect(LinuxConditionsProvider.network(nmcliOutput: "") == .unknown)
    }

    @Test func aFakeNmcliOnThePathIsUsed() async throws {
        let directory = try TemporaryDirectory()
        let script = directory.path + "/nmcli"
        try Data("#!/bin/sh\necho 'GENERAL.METERED:yes'\n".utf8).write(to: URL(fileURLWithPath: script))
        chmod(script, 0o755)
        let provider = LinuxConditionsProvider(
            environment: ["PATH": directory.path], powerSupplyDirectory: directory.path + "/none")
        #expect(await provider.currentConditions().network == .metered)
    }
}
