import Foundation
import PulseTestSupport
import PulseUploader
import Testing

@testable import PulseGateCLI

@Suite struct UploadCommandTests {
    @Test func usageListsEverySubcommand() async {
        let (status, captured) = await run(["upload", "--help"])
        #expect(status == 0)
        for subcommand in [
            "enqueue", "run", "drain", "flush", "background", "settle", "foreground", "status", "consent",
        ] {
            #expect(captured.stdout.contains("  \(subcommand)"))
        }
        let (_, top) = await run(["--help"])
        #expect(top.stdout.contains("upload"))
    }

    @Test func badArgumentsAreUsageErrors() async {
        #expect(await run(["upload", "teleport"]).0 == 2)
        #expect(await run(["upload", "status", "--bogus"]).0 == 2)
        #expect(await run(["upload", "consent", "maybe"]).0 == 2)
        #expect(await run(["upload", "status", "--encoding", "brotli"]).0 == 2)
        #expect(await run(["upload", "background", "--transfer", "pigeon"]).0 == 2)
        #expect(await run(["upload", "settle", "extra"]).0 == 2)
        let (status, captured) = await run(["upload", "drain", "--data-dir", "/tmp/unused-\(UUID().uuidString)"])
        #expect(status == 2)
        #expect(captured.stderr.contains("--app-id"))
    }

    @Test func optionsComeFromFlagsThenEnvironment() throws {
        let environment = [
            "PULSEGATE_ENDPOINT": "http://10.0.0.1:4318", "PULSEGATE_APP_ID": "env-app", "HOME": "/home/u",
        ]
        let fromEnvironment = try #require(try UploadCommand.parse([], environment: environment))
        #expect(fromEnvironment.endpoint == "http://10.0.0.1:4318")
        #expect(fromEnvironment.appId == "env-app")
        #expect(fromEnvironment.dataDirectory == "/home/u/.local/state/pulsegate/uploader")
        let fromFlags = try #require(
            try UploadCommand.parse(
                ["--app-id=flag-app", "--data-dir", "/d", "--network", "metered", "--power=low"],
                environment: environment))
        #expect(fromFlags.appId == "flag-app")
        #expect(fromFlags.dataDirectory == "/d")
        #expect(fromFlags.network == .metered)
        #expect(fromFlags.power == .low)
        #expect(fromFlags.forwarded.contains("--network"))
        #expect(fromFlags.transfer == .drain)
        #expect(try UploadCommand.parse(["--transfer", "os"], environment: [:])?.transfer == .os)
        #expect(try UploadCommand.parse([], environment: ["PULSEGATE_TRANSFER": "os"])?.transfer == .os)
        #expect(try UploadCommand.parse(["status", "--help"], environment: [:]) == nil)
        #expect(UploadCommand.defaultDataDirectory(["XDG_STATE_HOME": "/state"]) == "/state/pulsegate/uploader")
    }

    @Test func enqueueQueuesGoodLinesAndRejectsBadOnesByLineNumber() async throws {
        let directory = try ScratchDirectory("cli").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/records.jsonl"
        try Data(
            """
            {"type":"event","name":"one"}
            {"type":"log"}

            {"type":"metric","name":"m","value":1.5}
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let common = ["--data-dir", directory + "/queue", "--app-id", "cli-app", "--no-background"]
        let (status, captured) = await run(["upload", "enqueue", "--file", file] + common)
        #expect(status == 1)
        let acks = captured.stdout.split(separator: "\n").map { $0.split(separator: " ") }
        #expect(Set(acks.map { $0[1] }) == ["1", "4"])
        #expect(acks.allSatisfy { $0[0] == "ok" })
        #expect(acks.first { $0[1] == "1" }?[2].count == 26)  // the event's log.record.uid, a ULID
        #expect(acks.first { $0[1] == "4" }?[2].hasPrefix("m|") == true)  // the metric's series key
        #expect(captured.stderr.contains("rejected line 2: missing string field `body`"))
        #expect(captured.stderr.contains("queued 2 records, rejected 1 lines"))

        let (statusCode, report) = await run(["upload", "status", "--json"] + common)
        #expect(statusCode == 0)
        #expect(report.stdout.contains(#""totalRecords":2"#))
        let (_, text) = await run(["upload", "status"] + common)
        #expect(text.stdout.contains("queue: 2 records"))
        #expect(text.stdout.contains("consent granted"))

        #expect(await run(["upload", "consent", "revoke"] + common).0 == 0)
        let (_, after) = await run(["upload", "status"] + common)
        #expect(after.stdout.contains("queue: 0 records"))
        #expect(after.stdout.contains("consent withdrawn"))
    }
}
