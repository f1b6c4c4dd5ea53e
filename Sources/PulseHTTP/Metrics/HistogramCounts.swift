/// The observations of one histogram series, as ``PrometheusExposition/histogram(_:labels:bounds:_:)``
/// renders them: a count per bucket (not cumulative), then the sum and count of every observation.
///
/// The bucket bounds are the owner's (one static array per histogram), so a series is three
/// numbers and one array of `bounds.count` counts.
package struct HistogramCounts: Sendable, Equatable {
    /// Observations per bucket: `buckets[i]` counts those above `bounds[i - 1]` and at most
    /// `bounds[i]`; observations above the last bound are only in ``count``.
    package private(set) var buckets: [Int]
    /// Every observation.
    package private(set) var count = 0
    /// The sum of every observation.
    package private(set) var sum = 0.0

    /// An empty series for `bucketCount` bounds.
    package init(bucketCount: Int) {
        buckets = [Int](repeating: 0, count: bucketCount)
    }

    /// Counts one observation of `value` against the series' `bounds` (ascending).
    package mutating func observe(_ value: Double, bounds: [Double]) {
        count += 1
        sum += value
        if let index = bounds.firstIndex(where: { value <= $0 }) { buckets[index] += 1 }
    }
}
