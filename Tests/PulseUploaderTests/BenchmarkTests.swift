import Foundation
import PulseKit
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseUploader

/// Prints throughput numbers; asserts only that the work was done (no timing assertions).
///
/// `PULSEGATE_BENCH_RECORDS` sets the record count (default 2,000; the numbers in docs/uploader.md used 20,000 in a release build).
@Suite(.serialized) struct BenchmarkTests {
    static var recordCount: Int {
        ProcessInfo.processInfo.environment["PULSEGATE_BENCH_RECORDS"].flatMap { Int($0) } ?? 2_000
    }

    /// Records `count` small events, numbered 0 up, from `tasks` concurrent tasks (as an app's
    /// threads would).
    static func recordEvents(_ count: Int, into uploader: Uploader, fromTasks tasks: Int) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<tasks {
                group.addTask {
                    for index in stride(from: worker, to: count, by: tasks) {
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
        try await Self.recordEvents(count, into: uploader, fromTasks: concurrency)
        let enqueueSeconds = Date().timeIntervalSince(started)
        let statistics = uploader.executor.statistics

        // One sequential caller pays one fsync per record.
        let sequentialCount = min(500, count)
        let sequentialStart = Date()
        for index in 0..<sequentialCount {
            try await uploader.record(.log(LogEntry(body: "sequential \(index)")))
        }
        let sequentialSeconds = Date().timeIntervalSince(sequentialStart)

        let total = count + sequentialCount
        try await uploader.seal(.flush)
        let status = try await uploader.status()
        #expect(status.totalRecords == Int64(total))
        let sealedBytes = try await logicalBytes(uploader)
        let files = diskBytes(directory.path)
        let waitingBytes = try await waitingBytesPerRecord(count: min(count, 5_000))

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
            [uploader benchmark] on disk: \(waitingBytes) bytes/record waiting to be sealed, \(sealedBytes / total) \
            bytes/record sealed (gzip) — database pages in use; files incl. WAL: \(files) bytes
            [uploader benchmark] drain to the fault server's 200 path: \(batches) batches, \(wireBytes) bytes, \
            \(Int(Double(total) / drainSeconds)) records/s, \(Int(Double(batches) / drainSeconds)) batches/s
            """)
        try await uploader.close()
        server.stop()
    }

    /// Bytes per record of waiting (unsealed) records: a queue whose limits never trigger a seal.
    private func waitingBytesPerRecord(count: Int) async throws -> Int {
        let directory = try TemporaryDirectory()
        var configuration = UploaderConfiguration(
            endpoint: "http://127.0.0.1:9", appId: "bench", dataDirectory: directory.path)
        configuration.policy.maximumBatchRecords = 1_000_000
        configuration.policy.maximumBatchBytes = 64 << 20
        configuration.policy.maximumQueueBytes = 256 << 20
        let uploader = try await Uploader(configuration: configuration)
        let empty = try await logicalBytes(uploader)
        try await Self.recordEvents(count, into: uploader, fromTasks: 16)
        #expect(try await uploader.storedBatches().isEmpty)
        let used = try await logicalBytes(uploader) - empty
        try await uploader.close()
        return used / count
    }

    /// Bytes of database pages in use (the WAL's newer pages included), from SQLite itself.
    private func logicalBytes(_ uploader: Uploader) async throws -> Int {
        try await uploader.executor.read { connection in
            let pages = try connection.queryFirst("PRAGMA page_count") { try $0.column(0, as: Int.self) } ?? 0
            let free = try connection.queryFirst("PRAGMA freelist_count") { try $0.column(0, as: Int.self) } ?? 0
            let size = try connection.queryFirst("PRAGMA page_size") { try $0.column(0, as: Int.self) } ?? 0
            return (pages - free) * size
        }
    }

    private func diskBytes(_ directory: String) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasPrefix(Uploader.databaseFileName) }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            return total + ((attributes?[.size] as? Int) ?? 0)
        }
    }
}
