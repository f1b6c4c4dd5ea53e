import Foundation
import PulseJSON
import PulseProtocol
import Testing

/// Prints fast-codec versus Foundation timings for a full 64-event batch (about 33 KiB). Numbers
/// only, no timing assertions; the test asserts that both paths agree.
@Suite struct BatchCodecBenchmarkTests {
    static func benchBatch() -> EventBatch {
        var batch = Samples.eventBatch(count: 64, batchId: "b-bench")
        for index in batch.events.indices {
            batch.events[index].attributes += [
                JSONMember(key: "http.route", value: .string("/api/v2/catalog/items/\(index)/variants")),
                JSONMember(key: "http.status_code", value: .int(200)),
                JSONMember(key: "net.peer.name", value: .string("api.shop.example.com")),
                JSONMember(key: "thread", value: .string("com.apple.main-thread")),
                JSONMember(key: "user_agent", value: .string("ShopKit/2.3.0 (iPhone15,2; iOS 18.1)")),
            ]
        }
        return batch
    }

    @Test func fastCodecVersusFoundation() throws {
        let batch = Self.benchBatch()
        let fastBytes = batch.encodeJSON()
        let foundationBytes = try JSONEncoder().encode(batch)
        #expect(fastBytes.count > 30_000 && fastBytes.count < 40_000)
        let parser = JSONParser()
        #expect(try EventBatch(decodingJSON: fastBytes, parser: parser) == batch)
        #expect(try JSONDecoder().decode(EventBatch.self, from: foundationBytes).membersSorted == batch.membersSorted)

        let rounds = 10
        func measure(_ body: () throws -> Void) rethrows -> Double {
            try body()
            let start = ContinuousClock.now
            for _ in 0..<rounds { try body() }
            let elapsed = ContinuousClock.now - start
            let (seconds, attoseconds) = elapsed.components
            return (Double(seconds) * 1e6 + Double(attoseconds) / 1e12) / Double(rounds)
        }
        let fastEncode = measure { _ = batch.encodeJSON() }
        let fastDecode = try measure { _ = try EventBatch(decodingJSON: fastBytes, parser: parser) }
        let foundationEncode = try measure { _ = try JSONEncoder().encode(batch) }
        let foundationDecode = try measure { _ = try JSONDecoder().decode(EventBatch.self, from: foundationBytes) }
        func format(_ micros: Double) -> String { String(format: "%8.1f µs", micros) }
        print("EventBatch codec, 64 events, \(fastBytes.count) bytes (\(rounds) rounds, this build configuration):")
        print("  fast encode        \(format(fastEncode))   JSONEncoder \(format(foundationEncode))")
        print("  fast decode        \(format(fastDecode))   JSONDecoder \(format(foundationDecode))")
    }
}
