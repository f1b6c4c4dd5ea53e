import PulseKit
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseGateway

/// The intake's commit gathering: its settings, and jobs per fsync in `/metrics` from a real gateway.
@Suite struct CommitGatheringTests {
    @Test func gatheringComesFromTheConfigFileWithinItsLimits() throws {
        var configuration = GatewayConfiguration(dataDirectory: "/tmp/unused")
        #expect(configuration.commitGatherMicroseconds == 0)
        #expect(configuration.commitGatherJobs == 32)
        #expect(configuration.commitGathering == GroupGathering(window: 0, groupSize: 32))
        let file = try ConfigurationFile(
            parsing: Array(#"{"commitGatherMicroseconds": 0, "commitGatherJobs": 512}"#.utf8))
        file.apply(to: &configuration)
        #expect(configuration.commitGatherMicroseconds == 0)
        #expect(configuration.commitGatherJobs == 512)
        #expect(configuration.commitGathering.window == 0)
        try configuration.validate()
        configuration.commitGatherMicroseconds = 10_000
        try configuration.validate()
        for (microseconds, jobs) in [(-1, 32), (10_001, 32), (300, 0), (300, 513)] {
            configuration.commitGatherMicroseconds = microseconds
            configuration.commitGatherJobs = jobs
            #expect(throws: GatewayError.self) { try configuration.validate() }
        }
        #expect(throws: GatewayError.self) {
            try ConfigurationFile(parsing: Array(#"{"commitGatherMicroseconds": "fast"}"#.utf8))
        }
    }

    /// The value of an unlabelled sample line `name value` in a Prometheus text body.
    private static func sample(_ name: String, in text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Int(line.dropFirst(name.count + 1))
        }
        return nil
    }

    @Test func metricsReportJobsPerFsync() async throws {
        let harness = try await GatewayHarness.start {
            $0.commitGatherMicroseconds = 10_000
            $0.commitGatherJobs = 4
        }
        #expect(harness.gateway.store.commitStatistics.groupSizeSum == 0)
        let responses = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask {
                    try await harness.post(IntakeHTTPTests.body, batchID: "gather-\(index)").status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(responses == Array(repeating: 200, count: 8))
        let text = try await harness.request("GET", "/metrics", headers: []).bodyText
        #expect(text.contains("# TYPE pulsegate_commit_jobs_per_fsync histogram\n"))
        let groups = try #require(Self.sample("pulsegate_db_group_commits_total", in: text))
        let jobs = try #require(Self.sample("pulsegate_commit_jobs_per_fsync_sum", in: text))
        #expect(Self.sample("pulsegate_commit_jobs_per_fsync_count", in: text) == groups)
        #expect(text.contains(#"pulsegate_commit_jobs_per_fsync_bucket{le="+Inf"} \#(groups)"#))
        // Every intake request was one group-commit job (the forwarder's acknowledgements add more).
        #expect(jobs >= 8)
        #expect(groups >= 1 && groups <= jobs)
        #expect(text.contains(#"pulsegate_commit_jobs_per_fsync_bucket{le="512"} \#(groups)"#))
        let single = try #require(
            text.split(separator: "\n").first { $0.hasPrefix(#"pulsegate_commit_jobs_per_fsync_bucket{le="1"} "#) })
        #expect(Int(single.split(separator: " ").last ?? "") ?? -1 <= groups)
        await harness.stop()
    }
}
