import Foundation
import PulseTestSupport
import Testing

/// `pulsegate validate` and `pulsegate ingest validate` through the real binary: every problem of
/// a file is listed with its key path, the exit status is 0 or 1, and the servers refuse the same
/// files at start with the same problems.
@Suite struct ValidateCommandTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func goodGatewayFilesPassWithStatus0() async throws {
        try await withPulsegate("validate-good") { executable, root in
            let example = Self.repository.appendingPathComponent("deploy/gateway.json.example").path
            let result = try await runToExit(executable, ["validate", "--config", example])
            #expect(result.status == 0, "\(result.standardOutput) \(result.standardError)")
            #expect(result.standardOutput == "\(example): ok")
            let pair = try await TestCertificate.make(in: root.path, name: "ok")
            let config = root.path + "/tls.json"
            try writeFile(
                #"{"tlsCert": "\#(pair.certificatePath)", "tlsKey": "\#(pair.keyPath)", "allowedAppIds": ["shop"], "appLimits": {"apps": {"shop": {"outboxBatches": 10, "requestsPerSecond": 5}}}}"#,
                to: config)
            let withTLS = try await runToExit(executable, ["validate", "--config", config])
            #expect(withTLS.status == 0, "\(withTLS.standardOutput) \(withTLS.standardError)")
        }
    }

    @Test func everyProblemOfABadGatewayFileIsListedAndServeRefusesTheSame() async throws {
        try await withPulsegate("validate-bad") { executable, root in
            let config = root.path + "/bad.json"
            try writeFile(
                #"""
                {"listen": "nowhere", "outboxMaxBatches": 10, "dedupRetentionDays": 3, "logLevel": "loud",
                 "allowedAppIds": ["shop"], "defaultAppId": "news", "appKeys": {"shop": []},
                 "forwarding": {"forwardWindow": 100, "maxInFlight": "many"},
                 "appLimits": {"apps": {"shop": {"outboxBatches": 50, "burst": 2}}}, "outboxMaxBatch": 1}
                """#, to: config)
            let expected = [
                "listen:", "dedupRetentionDays:", "logLevel:", "defaultAppId:", "appKeys.shop:",
                "forwarding.forwardWindow:", "forwarding.maxInFlight:", "appLimits.apps.shop.outboxBatches:",
                "appLimits.apps.shop.burst:", "outboxMaxBatch:",
            ]
            let result = try await runToExit(executable, ["validate", "--config", config])
            #expect(result.status == 1)
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            for path in expected {
                #expect(lines.contains { $0.hasPrefix("\(config): \(path)") }, "\(path) missing in \(lines)")
            }
            #expect(lines.count == expected.count, "\(lines)")
            #expect(result.standardError.contains("has \(expected.count) problems"))

            // serve refuses the file with the same problems (exit 2) and starts nothing.
            let serve = try await runToExit(
                executable,
                ["serve", "--config", config, "--data-dir", root.path + "/data", "--upstream", "127.0.0.1:9"])
            #expect(serve.status == 2)
            for path in expected {
                #expect(serve.standardError.contains(path), "\(path) missing in \(serve.standardError)")
            }
            #expect(!FileManager.default.fileExists(atPath: root.path + "/data/gateway.sqlite"))

            // Flags are checked like serve's, and an unreadable file is a problem too.
            let missing = try await runToExit(executable, ["validate", "--config", root.path + "/missing.json"])
            #expect(missing.status == 1)
            #expect(missing.standardOutput.contains("cannot read the config file"))
            let flags = try await runToExit(executable, ["validate", "--listen", "nowhere", "--tls-key", "/x.pem"])
            #expect(flags.status == 1)
            #expect(flags.standardOutput.contains("listen:") && flags.standardOutput.contains("tlsCert: is required"))
            let usage = try await runToExit(executable, ["validate", "--bogus"])
            #expect(usage.status == 2)
        }
    }

    @Test func ingestFilesAreValidatedWithEveryProblemListed() async throws {
        try await withPulsegate("validate-ingest") { executable, root in
            let example = Self.repository.appendingPathComponent("docs/examples/ingest-config.json").path
            let good = try await runToExit(executable, ["ingest", "validate", "--config", example])
            #expect(good.status == 0, "\(good.standardOutput) \(good.standardError)")
            #expect(good.standardOutput == "\(example): ok")

            let config = root.path + "/bad.json"
            try writeFile(
                #"""
                {"heartbeatIntervalMs": 0, "apps": [
                  {"appId": "a", "packages": []},
                  {"appId": "", "packages": ["p"], "policy": {"revision": 1, "batchMaxEvents": 0}},
                  {"appId": "a", "packages": ["p", 7], "releases": [{"platform": "ios"}, {"buildNumber": "x"}]},
                  {"packages": ["p"]}
                ]}
                """#, to: config)
            let expected = [
                "heartbeatIntervalMs:", "apps[0].packages:", "apps[1].appId:", "apps[1].policy:",
                "apps[2].packages[1]:",
                "apps[2].releases[0].buildNumber:", "apps[2].releases[1].buildNumber:", "apps[2].releases[1].platform:",
                "apps[3].appId:",
            ]
            let result = try await runToExit(executable, ["ingest", "validate", "--config", config])
            #expect(result.status == 1)
            let lines = result.standardOutput.split(separator: "\n").map(String.init)
            for path in expected {
                #expect(lines.contains { $0.hasPrefix("\(config): \(path)") }, "\(path) missing in \(lines)")
            }
            #expect(lines.count == expected.count, "\(lines)")

            // The ingest server refuses the same file at start, naming the same problems.
            let serve = try await runToExit(
                executable,
                ["ingest", "--config", config, "--listen", "127.0.0.1:0", "--data-dir", root.path + "/data"])
            #expect(serve.status == 1)
            for path in expected {
                #expect(serve.standardError.contains(path), "\(path) missing in \(serve.standardError)")
            }
            #expect(try await runToExit(executable, ["ingest", "validate"]).status == 2)
        }
    }
}
