/// Builds a Prometheus text exposition (format version 0.0.4), the body of a `GET /metrics`.
///
/// ```swift
/// var out = PrometheusExposition()
/// out.family("pulsegate_build_info", .gauge, "Build information.")
/// out.sample("pulsegate_build_info", labels: ["version": "0.1.0"], 1)
/// let body = out.text
/// ```
///
/// Label values are escaped (backslash, double quote, line feed); metric and label names are the
/// caller's and must already follow the Prometheus naming rules.
package struct PrometheusExposition: Sendable {
    /// A metric family's type.
    package enum Kind: String, Sendable {
        /// A value that only goes up (until the process restarts).
        case counter
        /// A value that goes up and down.
        case gauge
        /// Buckets, sum and count of observations.
        case histogram
    }

    /// The exposition so far.
    package private(set) var text = ""

    /// Creates an empty exposition.
    package init() {}

    /// Starts a metric family: its `# HELP` and `# TYPE` lines.
    package mutating func family(_ name: String, _ kind: Kind, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample line with an integer value.
    package mutating func sample(_ name: String, labels: KeyValuePairs<String, String> = [:], _ value: Int) {
        line(name, labels, String(value))
    }

    /// One sample line with a floating-point value.
    package mutating func sample(_ name: String, labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        line(name, labels, Self.format(value))
    }

    /// A family of one unlabelled sample: its `# HELP` and `# TYPE` lines, then the value.
    package mutating func metric(_ name: String, _ kind: Kind, _ help: String, _ value: Int) {
        family(name, kind, help)
        sample(name, value)
    }

    /// A family of one unlabelled floating-point sample.
    package mutating func metric(_ name: String, _ kind: Kind, _ help: String, _ value: Double) {
        family(name, kind, help)
        sample(name, value)
    }

    /// A family with one label: a sample per entry of `values`, in the order of the label values.
    package mutating func metric(
        _ name: String, _ kind: Kind, _ help: String, label: String, _ values: [String: Int]
    ) {
        family(name, kind, help)
        for (value, count) in values.sorted(by: { $0.key < $1.key }) {
            sample(name, labels: [label: value], count)
        }
    }

    /// The samples of one histogram series (see ``HistogramCounts``).
    package mutating func histogram(
        _ name: String, labels: KeyValuePairs<String, String> = [:], bounds: [Double], _ series: HistogramCounts
    ) {
        histogram(name, labels: labels, bounds: bounds, counts: series.buckets, sum: series.sum, count: series.count)
    }

    /// The samples of one histogram series: cumulative `_bucket` lines for `bounds` (per-bucket
    /// counts in `counts`, one per bound; observations above the last bound are only in `count`),
    /// then `+Inf`, `_sum` and `_count`.
    package mutating func histogram(
        _ name: String, labels: KeyValuePairs<String, String> = [:], bounds: [Double], counts: [Int], sum: Double,
        count: Int
    ) {
        var cumulative = 0
        let prefix = labels.map { "\($0.key)=\"\(Self.escape($0.value))\"," }.joined()
        for (index, bound) in bounds.enumerated() {
            cumulative += index < counts.count ? counts[index] : 0
            text += "\(name)_bucket{\(prefix)le=\"\(Self.format(bound))\"} \(cumulative)\n"
        }
        text += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)\n"
        line(name + "_sum", labels, Self.format(sum))
        line(name + "_count", labels, String(count))
    }

    private mutating func line(_ name: String, _ labels: KeyValuePairs<String, String>, _ value: String) {
        if labels.isEmpty {
            text += "\(name) \(value)\n"
            return
        }
        text +=
            name + "{" + labels.map { "\($0.key)=\"\(Self.escape($0.value))\"" }.joined(separator: ",") + "} "
            + value + "\n"
    }

    /// A label value with `\`, `"` and line feeds escaped.
    package static func escape(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x22 || $0 == 0x0A }) else { return value }
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    /// A sample value: integral values without a fraction, others in Swift's shortest form.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
