import Foundation
import MsgTrans
import PulseStorage
import PulseTestSupport
import Testing

@testable import PulseGateway

/// Outbox payloads at rest are in wire form: the frame payload and compression byte the forwarder
/// sends, plaintext back exactly, old rows migrated, identities stored once.
@Suite struct StoredPayloadTests {
    private static let envelope = Array(
        ("{\"identity\":{\"projectId\":\"shop\"},\"events\":["
            + (0..<20).map { "{\"id\":\"e\($0)\",\"kind\":\"Log\",\"name\":\"log\",\"attributes\":{}}" }
            .joined(separator: ",") + "],\"batchId\":\"b\"}").utf8)

    @Test func payloadsFromTheOneThresholdOnAreOneZstdFrameAndComeBackExactly() throws {
        #expect(Self.envelope.count >= CompressionPolicy.defaultCompressionMinBytes)
        let stored = StoredPayload(encoding: Self.envelope)
        #expect(stored.compression == .zstd)
        #expect(stored.bytes.starts(with: [0x28, 0xB5, 0x2F, 0xFD]))
        #expect(stored.bytes.count < Self.envelope.count)
        #expect(stored.plainCount == Self.envelope.count)
        #expect(try stored.plaintext() == Self.envelope)
        // What a receiver does with the frame: the same decoder msgtrans uses.
        #expect(try PayloadCompressor.decompress(stored.bytes, with: .zstd, maxOutputBytes: 1 << 20) == Self.envelope)
        // Deterministic: encoding again gives the same bytes.
        #expect(StoredPayload(encoding: Self.envelope).bytes == stored.bytes)
    }

    @Test func payloadsBelowTheThresholdAreSentPlain() throws {
        let small = Array(Self.envelope.prefix(CompressionPolicy.defaultCompressionMinBytes - 1))
        let stored = StoredPayload(encoding: small)
        #expect(stored.compression == .none)
        #expect(stored.bytes == small)
        #expect(try stored.plaintext() == small)
    }

    @Test func aDamagedCompressedPayloadIsAStorageError() throws {
        var stored = StoredPayload(encoding: Self.envelope)
        stored.bytes[stored.bytes.count / 2] ^= 0xFF
        stored.bytes.removeLast(3)
        #expect(throws: GatewayError.self) { try stored.plaintext() }
        let wrongLength = StoredPayload(
            bytes: StoredPayload(encoding: Self.envelope).bytes, compression: 1, plainCount: Self.envelope.count - 1)
        #expect(throws: GatewayError.self) { try wrongLength.plaintext() }
    }

    @Test func rowsWrittenBeforeTheWireFormAreMigratedAndIdentitiesStoredOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        // A database as migration 005 left it: a zstd-1 row (payload_encoding 1), a plain row, both
        // carrying their identity, and one dead letter.
        let connection = try gatewayDatabase(atMigration: 5, in: directory.path)
        let legacy = try PayloadCompressor.compress(Self.envelope, with: .zstd, level: 1)
        let small = Array("{\"identity\":{}}".utf8)
        try connection.execute(
            """
            INSERT INTO outbox(app, identity_key, identity, kind, priority, pulse_batch_id, payload, compression,
                record_count, fallback, http_batch_id, next_attempt_at, created_at, payload_encoding, payload_bytes)
            VALUES ('shop', 'key', x'7B7D', 1, 1, 'pb', ?, 1, 20, NULL, 'http-1', 0, 0, 1, ?),
                ('shop', 'key', x'7B7D', 1, 1, 'pb2', ?, 0, 1, NULL, 'http-1', 0, 0, 0, ?)
            """, [legacy, Self.envelope.count, small, small.count])
        try connection.execute(
            """
            INSERT INTO dead_letter(seq, app, identity_key, identity, kind, priority, pulse_batch_id, payload,
                compression, record_count, fallback, http_batch_id, attempts, created_at, failed_at, code, message,
                payload_encoding, payload_bytes)
            VALUES (9, 'news', 'other', x'5B5D', 1, 1, 'pb9', ?, 1, 20, NULL, 'http-9', 1, 0, 0, 400, 'no', 1, ?)
            """, [legacy, Self.envelope.count])
        try connection.close()

        let store = try await GatewayStore.open(dataDirectory: directory.path)
        #expect(store.outboxDepth.rows == 2)
        #expect(store.outboxDepth.bytes == Self.envelope.count + small.count)
        let rows = try await store.nextRows(identityKey: "key", limit: 8)
        try #require(rows.count == 2)
        // The zstd-1 row is already one zstd frame: sent as stored, labelled zstd.
        #expect(rows[0].payload == legacy)
        #expect(rows[0].compression == Compression.zstd.rawValue)
        #expect(try rows[0].storedPayload.plaintext() == Self.envelope)
        #expect(rows[1].payload == small)
        #expect(rows[1].compression == Compression.none.rawValue)
        let pending = try await store.pendingIdentities()
        #expect(pending.map(\.identityKey) == ["key"])
        #expect(pending.first?.identity == Array("{}".utf8))
        try await store.close()

        let check = try SQLiteConnection(path: directory.path + "/" + GatewayStore.fileName)
        let identities = try check.query("SELECT identity_key, connect FROM identities ORDER BY id") {
            (try $0.column(0, as: String.self), try $0.column(1, as: [UInt8].self))
        }
        #expect(identities.map(\.0) == ["key", "other"])
        #expect(identities.map(\.1) == [Array("{}".utf8), Array("[]".utf8)])
        let columns = try check.query("SELECT name FROM pragma_table_info('outbox')") {
            try $0.column(0, as: String.self)
        }
        #expect(!columns.contains("identity"))
        #expect(columns.contains("identity_id"))
        try check.close()
    }

    @Test func intakeStoresEachIdentityOnce() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try await GatewayStore.open(dataDirectory: directory.path)
        let connect = Array(#"{"appId":"shop"}"#.utf8)
        func draft(_ id: String) -> OutboxDraft {
            OutboxDraft(
                app: "shop", identityKey: "k1", identity: connect, kind: .events, pulseBatchID: id,
                payload: Self.envelope, compression: Compression.zstd.rawValue, recordCount: 20, fallback: nil)
        }
        for batch in 0..<3 {
            _ = try await store.commitIntake(
                app: "shop", batchID: "b\(batch)", bodyHash: [UInt8(batch)], sentAt: nil, now: 0,
                retentionMilliseconds: 1000, drafts: [draft("p\(batch)a"), draft("p\(batch)b")])
        }
        let counted = try await store.reader.read { connection in
            (
                try connection.queryFirst("SELECT count(*) FROM identities") { try $0.column(0, as: Int.self) },
                try connection.queryFirst("SELECT count(DISTINCT identity_id) FROM outbox") {
                    try $0.column(0, as: Int.self)
                }
            )
        }
        #expect(counted.0 == 1)
        #expect(counted.1 == 1)
        let rows = try await store.nextRows(identityKey: "k1", limit: 4)
        #expect(rows.map(\.pulseBatchID) == ["p0a", "p0b", "p1a", "p1b"])
        #expect(rows.allSatisfy { $0.payload == StoredPayload(encoding: Self.envelope).bytes })
        // Once its rows are gone the identity is pruned with the expired dedup keys.
        try await store.delete(seqs: try await store.nextRows(identityKey: "k1", limit: 10).map(\.seq))
        _ = try await store.pruneExpired(now: 10_000, limit: 100)
        let left = try await store.reader.read { connection in
            try connection.queryFirst("SELECT count(*) FROM identities") { try $0.column(0, as: Int.self) }
        }
        #expect(left == 0)
        try await store.close()
    }
}
