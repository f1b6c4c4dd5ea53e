import PulseJSON
import Testing

@testable import PulseGateway

@Suite struct EncodedItemsTests {
    static let items: [[UInt8]] = [Array(#"{"a":1}"#.utf8), Array(#""two""#.utf8), Array("[3,4]".utf8)]

    @Test func storesItemsCommaSeparatedWithTheirSizes() {
        var stored = EncodedItems(capacity: 0)
        for item in Self.items { stored.append { $0.raw(item) } }
        #expect(stored.count == 3)
        #expect((0..<3).map(stored.size) == Self.items.map(\.count))
        #expect(stored.withBytes(0..<3) { String(decoding: $0, as: UTF8.self) } == #"{"a":1},"two",[3,4]"#)
        #expect(stored.withBytes(1..<2) { Array($0) } == Self.items[1])
        #expect(stored.withBytes(1..<3) { String(decoding: $0, as: UTF8.self) } == #""two",[3,4]"#)
        #expect(stored.withBytes(2..<2) { $0.count } == 0)
        #expect(EncodedItems(capacity: 0).isEmpty)
    }

    @Test func itemsFromArraysSplitLikeItemsWrittenInPlace() {
        var written = EncodedItems(capacity: 16)
        for item in Self.items { written.append { $0.raw(item) } }
        let splitter = BatchSplitter(arrayKey: "events", maxItems: 2, maxBytes: 1 << 16)
        let id = String(repeating: "a", count: BatchSplitter.batchIDLength)
        let fromArrays = splitter.split(identity: Array("{}".utf8), items: EncodedItems(Self.items)) { _ in id }
        let inPlace = splitter.split(identity: Array("{}".utf8), items: written) { _ in id }
        #expect(fromArrays.batches == inPlace.batches)
        #expect(fromArrays.batches.map(\.range) == [0..<2, 2..<3])
        #expect(
            fromArrays.batches.map { String(decoding: $0.payload, as: UTF8.self) } == [
                #"{"identity":{},"events":[{"a":1},"two"],"batchId":"\#(id)"}"#,
                #"{"identity":{},"events":[[3,4]],"batchId":"\#(id)"}"#,
            ])
    }

    /// The splitter sizes envelopes without writing them: at every byte limit each batch fits, and
    /// takes every item that would still fit; an item too large on its own is dropped.
    @Test func everyBatchFitsItsByteLimitAndTakesAllThatFits() {
        let identity = Array(#"{"projectId":"shop","deviceId":"d-1","buildNumber":7}"#.utf8)
        let items = (0..<12).map { Array(#"{"n":"\#(String(repeating: "x", count: $0 * 3))"}"#.utf8) }
        var stored = EncodedItems(capacity: 0)
        for item in items { stored.append { $0.raw(item) } }
        let id = String(repeating: "b", count: BatchSplitter.batchIDLength)
        let empty = #"{"identity":,"events":[],"batchId":"\#(id)"}"#.utf8.count + identity.count
        for maxBytes in empty..<(empty + 200) {
            let splitter = BatchSplitter(arrayKey: "events", maxItems: 5, maxBytes: maxBytes)
            let (batches, dropped) = splitter.split(identity: identity, items: stored) { _ in id }
            let tooLarge = items.filter { empty + $0.count > maxBytes }.count
            #expect(dropped == tooLarge, "\(maxBytes)")
            #expect(batches.reduce(0) { $0 + $1.count } + dropped == items.count, "\(maxBytes)")
            for batch in batches {
                #expect(batch.payload.count <= maxBytes, "\(maxBytes)")
                let expected = empty + batch.range.reduce(0) { $0 + items[$1].count } + batch.count - 1
                #expect(batch.payload.count == expected, "\(maxBytes)")
                let next = batch.range.upperBound
                if next < items.count, batch.count < 5, empty + items[next].count <= maxBytes {
                    #expect(batch.payload.count + 1 + items[next].count > maxBytes, "\(maxBytes) at \(next)")
                }
            }
        }
    }
}
