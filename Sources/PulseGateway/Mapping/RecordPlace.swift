import PulseJSON

/// Where a log record or span is in the request, and what it belongs to (its resource's identity
/// is passed beside it: a ``ResolvedIdentity`` copy retains each of its strings).
struct RecordPlace {
    /// Its scope's name, the events' `module`.
    var module: String?
    /// Its resource entry (`resourceLogs[i]` …).
    var resource: JSONCursor
    /// Resource, scope and record index, for derived ids.
    var position: (resource: Int, scope: Int, record: Int)
}
