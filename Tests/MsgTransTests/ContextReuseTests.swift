import Foundation
import PulseCompression
import PulseKit
import Testing

@testable import MsgTrans

/// Decompression reuses pooled contexts, and a reused context behaves like a new one: same
/// output, same limits, no state carried over from a failed stream.
@Suite("Decompression context reuse")
struct ContextReuseTests {
    private func plaintext(_ seed: Int) -> [UInt8] {
        let json = Payloads.eventBatch(eventCount: 20, padding: 0)
        return json + Array("-\(seed)".utf8)
    }

    /// 200 decompressions in a row create (almost) no contexts: each takes the pooled one.
    /// (Other tests running at the same time may take a context out of the pool meanwhile, so a
    /// few creations are allowed; a context per payload would be 200.)
    @Test(arguments: [Compression.zstd, .zlib])
    func sequentialDecompressionsReuseOneContext(codec: Compression) throws {
        let payloads = try (0..<200).map { try PayloadCompressor.compress(plaintext($0), with: codec) }
        let before = PayloadCompressor.contextStatistics
        for (index, payload) in payloads.enumerated() {
            let output = try PayloadCompressor.decompress(payload, with: codec, maxOutputBytes: 1 << 20)
            #expect(output == plaintext(index), "payload \(index): \(output.count) bytes")
        }
        let after = PayloadCompressor.contextStatistics
        if codec == .zstd {
            #expect(after.zstdContextsCreated - before.zstdContextsCreated < 10)
            #expect(after.zstdContextsReused - before.zstdContextsReused >= 190)
        } else {
            #expect(after.zlibStreamsCreated - before.zlibStreamsCreated < 10)
            #expect(after.zlibStreamsReused - before.zlibStreamsReused >= 190)
        }
    }

    /// A stream that fails half-way (corrupt, truncated, too large) leaves nothing behind: the
    /// next payload on the reused context decodes exactly, and the limit of each call is its own.
    @Test(arguments: [Compression.zstd, .zlib])
    func failedStreamsDoNotLeakIntoTheNextOne(codec: Compression) throws {
        let good = plaintext(1)
        let compressed = try PayloadCompressor.compress(good, with: codec)
        // A valid header followed by garbage: the decoder starts, then fails.
        let corrupt = Array(compressed.prefix(codec == .zstd ? 6 : 2)) + [UInt8](repeating: 0xFF, count: 64)
        let truncated = Array(compressed.prefix(compressed.count - 3))
        for _ in 0..<3 {
            #expect(throws: MsgTransError.self) {
                try PayloadCompressor.decompress(corrupt, with: codec, maxOutputBytes: 1 << 20)
            }
            let first = try PayloadCompressor.decompress(compressed, with: codec, maxOutputBytes: 1 << 20)
            #expect(first == good, "decoded \(first.count) bytes")
            let short = #expect(throws: MsgTransError.self) {
                try PayloadCompressor.decompress(truncated, with: codec, maxOutputBytes: 1 << 20)
            }
            #expect(short?.code == .truncatedStream)
            // The same stream against a smaller limit than the previous call: refused.
            let tooLarge = #expect(throws: MsgTransError.self) {
                try PayloadCompressor.decompress(compressed, with: codec, maxOutputBytes: good.count - 1)
            }
            #expect(tooLarge?.code == .decompressedTooLarge)
            let exact = try PayloadCompressor.decompress(compressed, with: codec, maxOutputBytes: good.count)
            #expect(exact == good, "decoded \(exact.count) bytes")
        }
    }

    /// Concurrent callers never share a context.
    @Test(arguments: [Compression.zstd, .zlib])
    func concurrentDecompressionsAreIndependent(codec: Compression) async throws {
        let payloads = try (0..<64).map { try PayloadCompressor.compress(plaintext($0), with: codec) }
        let results = await withTaskGroup(of: (Int, [UInt8]?).self) { group in
            for (index, payload) in payloads.enumerated() {
                group.addTask {
                    (index, try? PayloadCompressor.decompress(payload, with: codec, maxOutputBytes: 1 << 20))
                }
            }
            var results: [Int: [UInt8]?] = [:]
            for await (index, output) in group { results[index] = output }
            return results
        }
        for index in 0..<64 {
            #expect(results[index] == plaintext(index), "payload \(index)")
        }
    }
}

/// The pool's bounds: at most `maximumIdle` idle contexts per codec however many were in use at
/// once, and no idle zstd context above `maximumRetainedBytes` after a large-window stream.
@Suite("Decompression context pool bounds", .serialized)
struct ContextPoolBoundTests {
    @Test(arguments: [Compression.zstd, .zlib])
    func manyConcurrentUsersLeaveAtMostTheIdleLimit(codec: Compression) async throws {
        let payload = try PayloadCompressor.compress(Payloads.eventBatch(eventCount: 20, padding: 0), with: codec)
        // 64 decompressions at once on more threads than the cooperative pool: many contexts alive.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread {
                            for _ in 0..<20 {
                                _ = try? PayloadCompressor.decompress(payload, with: codec, maxOutputBytes: 1 << 20)
                            }
                            done.resume()
                        }.start()
                    }
                }
            }
        }
        let idle = CompressionContextPool.shared.idle
        #expect((codec == .zstd ? idle.zstd : idle.zlib) <= CompressionContextPool.maximumIdle)
    }

    @Test func aContextThatGrewPastTheRetainedLimitIsFreed() throws {
        // 8 MiB of varied text: the decoder needs a window far above 1 MiB.
        var plaintext: [UInt8] = []
        plaintext.reserveCapacity(8 << 20)
        var state: UInt64 = 0x1234_5678
        while plaintext.count < 8 << 20 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            plaintext.append(UInt8(ascii: "a") + UInt8(truncatingIfNeeded: state >> 59))
        }
        let compressed = try PayloadCompressor.compress(plaintext, with: .zstd)
        let output = try PayloadCompressor.decompress(compressed, with: .zstd, maxOutputBytes: 16 << 20)
        #expect(output == plaintext, "decoded \(output.count) bytes")
        #expect(CompressionContextPool.shared.idle.largestZstdBytes <= CompressionContextPool.maximumRetainedBytes)
    }
}
