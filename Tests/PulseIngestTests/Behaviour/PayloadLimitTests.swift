import Foundation
import MsgTrans
import MsgTransRuntime
import PulseProtocol
import Testing

@testable import PulseIngest

/// One payload limit, 16 MiB of plaintext, whether the payload arrived plain or compressed.
@Suite(.serialized) struct PayloadLimitTests {
    static let limit = 16 << 20

    /// A valid event batch of exactly `count` bytes (JSON whitespace pads it).
    static func batch(_ batchID: String, bytes count: Int) -> [UInt8] {
        var json = Array(Fixture.eventBatch(batchId: batchID, eventIds: [Fixture.hexID(batchID.count)]).utf8)
        precondition(json.count <= count)
        json.append(contentsOf: repeatElement(UInt8(ascii: " "), count: count - json.count))
        return json
    }

    @Test func theLimitIsTheDocumentedSixteenMiB() {
        #expect(IngestCore.maxPayloadBytes(IngestConfiguration(dataDirectory: "/unused")) == Self.limit)
        #expect(Self.limit == PulseLimits.maxDecompressedBytes)
    }

    @Test(arguments: [Compression.none, .zstd, .zlib])
    func aPayloadOverTheLimitIsRefusedAndOneAtItIsStored(_ compression: Compression) async throws {
        let (harness, client, _) = try await Harness.startConnected()

        let over = await client.send(
            biz: Biz.eventBatch, payload: Self.batch("over", bytes: Self.limit + 1), compression: compression)
        let refusedFrame = try #require(await client.readFrame())
        let refused = try #require(Response(frame: refusedFrame, expectedID: over))
        #expect(refused.code == 400)
        #expect(refused.text.contains("payload larger than 16777216 bytes (uncompressed)"), "\(refused.text)")
        #expect(try await harness.server.counts(app: Fixture.appId).events == 0)

        // The connection stays open, and a payload of exactly the limit is accepted.
        let at = await client.send(
            biz: Biz.eventBatch, payload: Self.batch("at", bytes: Self.limit), compression: compression)
        let acceptedFrame = try #require(await client.readFrame())
        let accepted = try #require(Response(frame: acceptedFrame, expectedID: at))
        #expect(accepted.code == 0, "\(accepted.text)")
        #expect(try await harness.server.counts(app: Fixture.appId).events == 1)
        await harness.stop()
    }

    @Test func aConfiguredLimitAppliesToPlainAndCompressedAlike() async throws {
        let harness = try await Harness.start { $0.transport.connection.frameLimits.maxDecompressedBytes = 4096 }
        let (client, _) = try await harness.connectedClient()
        for compression in [Compression.none, .zstd] {
            let over = try #require(
                await client.request(
                    biz: Biz.eventBatch,
                    json: String(decoding: Self.batch("o", bytes: 4097), as: UTF8.self), compression: compression))
            #expect(over.code == 400)
            #expect(over.text.contains("payload larger than 4096 bytes (uncompressed)"), "\(over.text)")
        }
        let at = try #require(
            await client.request(
                biz: Biz.eventBatch, json: String(decoding: Self.batch("a", bytes: 4096), as: UTF8.self),
                compression: .zstd))
        #expect(at.code == 0, "\(at.text)")
        await harness.stop()
    }
}
