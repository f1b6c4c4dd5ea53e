/// Bounds applied while transcoding one export request.
package struct OTLPProtobufLimits: Sendable, Hashable {
    /// The deepest accepted nesting of messages, counting the export request itself as 1; clamped
    /// to 1...100 (100 is protobuf's own default recursion limit).
    ///
    /// Each message level adds at most two levels of JSON nesting (an array and an object), so the
    /// output of a request within `maxDepth` nests at most `2 × maxDepth - 1` deep. The default, 32,
    /// keeps the output within a `JSONParser(maxDepth: 64)`.
    package var maxDepth: Int
    /// The largest accepted JSON output in bytes. Transcoding fails with
    /// ``OTLPProtobufError/Code/outputTooLarge`` soon after the output grows beyond it (hex ids,
    /// decimal strings and key names make OTLP/JSON several times larger than the protobuf).
    package var maxOutputBytes: Int

    /// Creates limits; the defaults suit a gateway whose JSON parser accepts depth 64 and 64 MiB.
    package init(maxDepth: Int = 32, maxOutputBytes: Int = 64 << 20) {
        self.maxDepth = min(max(maxDepth, 1), 100)
        self.maxOutputBytes = max(maxOutputBytes, 0)
    }
}
