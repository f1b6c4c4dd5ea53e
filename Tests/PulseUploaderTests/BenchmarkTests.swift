import Foundation
import Testing

@testable import PulseUploader

/// Prints throughput numbers; asserts only that the work was done (no timing assertions).
///
/// `PULSEGATE_BENCH_RECORDS` sets the record count (default 20,000).
@Suite(.serialized) struct BenchmarkTests {
    static var recordCount: Int {
        ProcessInfo.processInfo.environment["PULSEGATE_BENCH_RECORDS"].flatMap { Int($0) } ?? 20_000
    }

    @Test func enqueueAndDrainThroughput() async throws {
        let count = BenchmarkTests.recordCount
        let server = try FaultServer()
        let directory = try TemporaryDirectory()
        var configuration = UploaderConfiguration(
            endpoint: server.baseURL, appId: "bench", dataDirectory: directory.path)
        configuration.random = RandomSource(seed: 5)
        let uploader = try await Uploader(configuration: configuration)

        // Enqueue from 64 concurrent tasks, as an app's threads would: they share fsyncs through group commit.
        let concurrency = 64
        let started = Date()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    for index in stride(from: worker, to: count, by: concurrency) {
                        try await uploader.record(
                            .event(
                                EventEntry(
                                    name: "screen_view",
                                    attributes: ["screen": "home", "index": .int(Int64(index)), "cold": false])))
                    }
                }
            }
            try await group.waitForAll()
        }
        let enqueueSeconds = Date().timeIntervalSince(started)
        let statistics = uploader.executor.statistics

        // One sequential caller pays one fsync per record.
        let sequentialCount = min(500, count)
        let sequentialStart = Date()
        for index in 0..<sequentialCount {
            try await uploader.record(.log(LogEntry(body: "sequential \(index)")))
        }
        let sequentialSeconds = Date().timeIntervalSince(sequentialStart)

        try await uploader.seal(.flush)
        let status = try await uploader.status()
        let total = count + sequentialCount
        #expect(status.totalRecords == Int64(total))
        let onDisk = diskBytes(directory.path)

        let drainStart = Date()
        var delivered = 0
        while true {
            let report = try await uploader.flush()
            delivered += report.delivered
            if report.attempted == 0 { break }
        }
        let drainSeconds = Date().timeIntervalSince(drainStart)
        let batches = server.requests.count
        let wireBytes = server.requests.reduce(0) { $0 + $1.body.count }
        #expect(try await uploader.status().totalRecords == 0)
        #expect(delivered == batches)

        print(
            """
            [uploader benchmark] \(count) records from \(concurrency) concurrent tasks: \
            \(Int(Double(count) / enqueueSeconds)) records/s \
            (\(statistics.groupCommits) group commits, \
            \(String(format: "%.1f", Double(statistics.groupCommittedJobs) / Double(max(1, statistics.groupCommits)))) \
            records per fsync)
            [uploader benchmark] sequential single caller: \(Int(Double(sequentialCount) / sequentialSeconds)) records/s
            [uploader benchmark] on disk after sealing: \(onDisk) bytes for \(total) records = \
            \(onDisk / total) bytes/record (queue.sqlite + WAL; sealed batches are gzip)
            [uploader benchmark] drain to the fault server's 200 path: \(batches) batches, \(wireBytes) bytes, \
            \(Int(Double(total) / drainSeconds)) records/s, \(Int(Double(batches) / drainSeconds)) batches/s
            """)
        try await uploader.close()
        server.stop()
    }

    private func diskBytes(_ directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(Uploader.databaseFileName) }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            return total + ((attributes?[.size] as? Int) ?? 0)
        }
    }
}
