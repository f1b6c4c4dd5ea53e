import Synchronization

/// The server's running counters, seeded from the store at start.
final class IngestCounters: Sendable {
    private struct State {
        var apps: [String: IngestAppStatistics] = [:]
        var rejections: [Int: Int] = [:]
    }

    private let state = Mutex(State())

    /// Seeds the stored totals (events, crashes, batches) from the database.
    func seed(_ counts: [String: IngestCounts]) {
        state.withLock { state in
            for (app, count) in counts {
                var stats = state.apps[app] ?? IngestAppStatistics()
                stats.eventBatches = count.eventBatches
                stats.crashBatches = count.crashBatches
                stats.events = count.events
                stats.crashes = count.crashes
                state.apps[app] = stats
            }
        }
    }

    func recordEventBatch(app: String, outcome: BatchOutcome) {
        record(app: app, outcome: outcome, batches: \.eventBatches, items: \.events, duplicates: \.duplicateEvents)
    }

    func recordCrashBatch(app: String, outcome: BatchOutcome) {
        record(app: app, outcome: outcome, batches: \.crashBatches, items: \.crashes, duplicates: \.duplicateCrashes)
    }

    /// Counts one stored or duplicate batch of `app` into the given counters of its kind.
    private func record(
        app: String, outcome: BatchOutcome, batches: WritableKeyPath<IngestAppStatistics, Int>,
        items: WritableKeyPath<IngestAppStatistics, Int>, duplicates: WritableKeyPath<IngestAppStatistics, Int>
    ) {
        state.withLock { state in
            var stats = state.apps[app] ?? IngestAppStatistics()
            switch outcome {
            case .duplicateBatch:
                stats.duplicateBatches += 1
            case .stored(let stored, let duplicateItems):
                stats[keyPath: batches] += 1
                stats[keyPath: items] += stored
                stats[keyPath: duplicates] += duplicateItems
            }
            state.apps[app] = stats
        }
    }

    func recordRejection(code: Int) {
        state.withLock { $0.rejections[code, default: 0] += 1 }
    }

    /// The per-app numbers merged with the registry's census, and the rejections. Every app in
    /// `knownApps` is listed, with zeros if nothing happened.
    func snapshot(census: [String: (sessions: Int, present: Int)], knownApps: some Sequence<String>) -> (
        apps: [String: IngestAppStatistics], rejections: [Int: Int]
    ) {
        state.withLock { state in
            var apps = state.apps
            for app in knownApps where apps[app] == nil {
                apps[app] = IngestAppStatistics()
            }
            for (app, counts) in census {
                var stats = apps[app] ?? IngestAppStatistics()
                stats.sessions = counts.sessions
                stats.present = counts.present
                apps[app] = stats
            }
            return (apps, state.rejections)
        }
    }
}
