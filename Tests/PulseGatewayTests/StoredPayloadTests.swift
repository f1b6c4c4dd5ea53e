import Foundation
import PulseStorage
import Testing

@testable import PulseGateway

/// Outbox payloads at rest: compressed when that helps, plaintext back exactly, old rows migrated.
@Suite struct StoredPayloadTests {
    private static let envelope = Array(
        ("{\"identity\":{\"projectId\":\"shop\"},\"events\":["
            + (0..<20).map { "{\"id\":\"e\($0)\",\"kind\":\"Log\",\"name\":\"log\",\"attributes\":{}}" }
            .joined(separator: ",") + "],\"batchId\":\"b\"}").utf8)

    @Test func largePayloadsAreCompressedAndComeBackExactly() throws {
        let stored = StoredPayload(encoding: Self.envelope)
        #expect(stored.encoding == .zstd)
        #expect(stored.bytes.count < Self.envelope.count)
        #expect(stored.plainCount == Self.envelope.count)
        #expect(try stored.plaintext() == Self.envelope)
    }

    @Test func smallOrIncompressiblePayloadsStayPlain() throws {
        let small = StoredPayload(encoding: Array("{\"identity\":{}}".utf8))
        #expect(small.encoding == .plain)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let random = StoredPayload(encoding: noise)
        #expect(random.encoding == .plain)
        #expect(try random.plaintext() == noise)
    }

    @Test func aDamagedCompressedPayloadIsAStorageError() throws {
        var stored = StoredPayload(encoding: Self.envelope)
        stored.bytes[stored.bytes.count / 2] ^= 0xFF
        stored.bytes.removeLast(3)
        #expect(throws: GatewayError.self) { try stored.plaintext() }
        let wrongLength = StoredPayload(
            bytes: StoredPayload(encoding: Self.envelope).bytes, encoding: 1, plainCount: Self.envelope.count - 1)
        #expect(throws: GatewayError.self) { try wrongLength.plaintext() }
    }

    @Test func rowsWrittenBeforeTheMigrationAreReadAsPlainAndCounted() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A database as the first schema left it, with one outbox row.
        let connection = try SQLiteConnection(path: directory.path + "/" + GatewayStore.fileName)
        var first = Migrator()
        let original = GatewaySchema.migrator.migrations[0]
        first.append(original.identifier, sql: original.sql)
        try first.migrate(connection)
        try connection.execute(
            """
            INSERT INTO outbox(app, identity_key, identity, kind, priority, pulse_batch_id, payload, compression,
                record_count, fallback, http_batch_id, next_attempt_at, created_at)
            VALUES ('shop', 'key', x'7B7D', 1, 1, 'pb', ?, 1, 20, NULL, 'http-1', 0, 0)
            """, [Self.envelope])
        try connection.close()

        let store = try await GatewayStore.open(dataDirectory: directory.path)
        #expect(store.outboxDepth.rows == 1)
        #expect(store.outboxDepth.bytes == Self.envelope.count)
        let summaries = try await store.appSummaries()
        #expect(summaries.first?.bytes == Self.envelope.count)
        let head = try #require(try await store.head(identityKey: "key"))
        #expect(head.payload == Self.envelope)
        try await store.close()
    }
}
