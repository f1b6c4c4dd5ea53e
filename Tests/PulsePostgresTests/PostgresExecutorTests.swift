import Foundation
import PulseKit
import PulsePostgres
import PulseTestSupport
import Testing

/// The libpq module against a real PostgreSQL cluster started by the test (initdb + pg_ctl).
@Suite(.serialized) struct PostgresExecutorTests {
    @Test func valuesRoundTripInBinaryFormat() async throws {
        try await PostgresCluster.with(label: "pg-values") { cluster in
            let executor = PostgresExecutor(connectionString: cluster.url())
            let row = try await executor.run { connection throws(PostgresError) in
                try connection.execute(
                    "SELECT $1::bigint, $2::text, $3::bytea, $4::boolean, $5::bigint[], NULL::bigint, $6::bytea[]",
                    [
                        .int(-42), .text("grüße"), .bytes([0, 1, 255]), .bool(true), .intArray([1, -2, 1 << 40]),
                        .bytesArray([[9], nil]),
                    ]
                ).first
            }
            let values = try #require(row)
            #expect(try values.int64(0) == -42)
            #expect(try values.string(1) == "grüße")
            #expect(try values.bytes(2) == [0, 1, 255])
            #expect(try values.bool(3))
            #expect(try values.int64Array(4) == [1, -2, 1 << 40])
            #expect(values.isNull(5))
            #expect(try values.optionalInt64(5) == nil)
            await executor.close()
        }
    }

    @Test func groupCommitSharesOneTransactionAndABadJobFailsAlone() async throws {
        try await PostgresCluster.with(label: "pg-group") { cluster in
            let executor = PostgresExecutor(connectionString: cluster.url())
            _ = try await executor.run { connection throws(PostgresError) in
                try connection.execute("CREATE TABLE t (id bigint PRIMARY KEY, v text NOT NULL)")
            }
            // 200 concurrent jobs; job 7 violates NOT NULL.
            let outcomes = await withTaskGroup(of: (Int, Bool).self) { group in
                for id in 0..<200 {
                    group.addTask {
                        let value: PostgresValue = id == 7 ? .null : .text("v\(id)")
                        do {
                            let results = try await executor.commit([
                                PostgresStatement("INSERT INTO t VALUES ($1, $2::text)", [.int(Int64(id)), value]),
                                PostgresStatement("SELECT count(*) FROM t WHERE id = $1", [.int(Int64(id))]),
                            ])
                            return (id, try results[1].first?.int64(0) == 1)
                        } catch {
                            return (id, false)
                        }
                    }
                }
                return await group.reduce(into: [Int: Bool]()) { $0[$1.0] = $1.1 }
            }
            #expect(outcomes.filter { $0.value }.count == 199)
            #expect(outcomes[7] == false)
            let count = try await executor.run { connection throws(PostgresError) in
                try connection.execute("SELECT count(*) FROM t").first?.int64(0)
            }
            #expect(count == 199)
            let statistics = executor.statistics
            #expect(statistics.groupCommittedJobs == 199)
            #expect(statistics.groupFailedJobs == 1)
            // Jobs queued while a group was in flight were committed together.
            #expect(statistics.largestGroupCommit > 1)
            await executor.close()
        }
    }

    @Test func migrationsFromSeveralNodesAtOnceApplyOnceAndRefuseAForeignList() async throws {
        try await PostgresCluster.with(label: "pg-migrate") { cluster in
            var migrator = PostgresMigrator()
            migrator.append("001_a", sql: "CREATE TABLE a (x bigint); INSERT INTO a VALUES (1);")
            migrator.append("002_b", sql: "CREATE TABLE b (y bigint);")
            let list = migrator
            let url = cluster.url()
            let applied = try await withThrowingTaskGroup(of: [String].self) { group in
                for node in 0..<4 {
                    group.addTask {
                        let executor = PostgresExecutor(connectionString: url, threadName: "pg.m\(node)")
                        defer { Task { await executor.close() } }
                        return try await executor.run { connection throws(PostgresError) in try list.migrate(connection)
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(applied.sorted() == ["001_a", "002_b"])
            let executor = PostgresExecutor(connectionString: url)
            #expect(
                try await executor.run { c throws(PostgresError) in
                    try c.execute("SELECT count(*) FROM a").first?.int64(0)
                } == 1)
            var foreign = PostgresMigrator()
            foreign.append("001_other", sql: "SELECT 1;")
            let other = foreign
            await #expect(throws: PostgresError.self) {
                try await executor.run { connection throws(PostgresError) in try other.migrate(connection) }
            }
            await executor.close()
        }
    }

    @Test func aStoppedServerFailsJobsAsUnavailableAndTheExecutorReconnects() async throws {
        try await PostgresCluster.with(label: "pg-outage") { cluster in
            let executor = PostgresExecutor(connectionString: cluster.url())
            let probe = [PostgresStatement("SELECT 1")]
            _ = try await executor.commit(probe)
            try await cluster.stop()
            var code: PostgresError.Code?
            do {
                _ = try await executor.commit(probe)
            } catch {
                code = (error as? PostgresError)?.code
            }
            #expect(code == .unavailable)
            try await cluster.start()
            #expect(await eventually(within: .seconds(10)) { (try? await executor.commit(probe)) != nil })
            #expect(executor.statistics.connects >= 2)
            await executor.close()
        }
    }

    @Test func aReadOnlyServerRefusesWritesAsReadOnly() async throws {
        try await PostgresCluster.with(label: "pg-ro", settings: ["default_transaction_read_only = on"]) { cluster in
            // By default a session must be read-write (target_session_attrs): no connection at all.
            let strict = PostgresExecutor(connectionString: cluster.url())
            var strictCode: PostgresError.Code?
            do { _ = try await strict.commit([PostgresStatement("SELECT 1")]) } catch {
                strictCode = (error as? PostgresError)?.code
            }
            #expect(strictCode == .unavailable)
            await strict.close()
            // Connected anyway, the write is refused as read-only.
            let executor = PostgresExecutor(connectionString: cluster.url() + "?target_session_attrs=any")
            var code: PostgresError.Code?
            do {
                _ = try await executor.commit([PostgresStatement("CREATE TABLE t (x bigint)")])
            } catch {
                code = (error as? PostgresError)?.code
            }
            #expect(code == .readOnly)
            await executor.close()
        }
    }
}
