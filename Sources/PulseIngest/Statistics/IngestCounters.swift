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
        state.withLock { state in
            var stats = state.apps[app] ?? IngestAppStatistics()
            switch outcome {
            case .duplicateBatch:
                stats.duplicateBatches += 1
            case .stored(let stored, let duplicates):
                stats.eventBatches += 1
                stats.events += stored
                stats.duplicateEvents += duplicates
            }
            state.apps[app] = stats
        }
    }

    func recordCrashBatch(app: String, outcome: BatchOutcome) {
        state.withLock { state in
            var stats = state.apps[app] ?? IngestAppStatistics()
            switch outcome {
            case .duplicateBatch:
                stats.duplicateBatches += 1
            case .stored(let stored, let duplicates):
                stats.crashBatches += 1
                stats.crashes += stored
                stats.duplicateCrashes += duplicates
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
