package import PulseProtocol

/// One app the ingest server accepts: its package policy, its policy snapshot and its releases.
package struct IngestApp: Sendable, Hashable {
    /// The package name that allows every package, including a connect without one.
    package static let anyPackage = "*"

    /// The public App ID (`appId` at connect, `projectId` in batches, `appKey` in update checks).
    package var appId: String
    /// The runtime packages (bundle identifiers) allowed to connect as this app. ``anyPackage``
    /// allows any package and a missing one; otherwise a connect must name one of these.
    package var packages: [String]
    /// The policy snapshot served by CLIENT_CONFIG_PULL; its `revision` is reported by connect and
    /// heartbeat results.
    package var policy: ConfigSnapshot
    /// Published builds for CLIENT_APP_UPDATE_CHECK.
    package var releases: [IngestRelease]

    /// Creates an app entry.
    package init(appId: String, packages: [String], policy: ConfigSnapshot, releases: [IngestRelease] = []) {
        self.appId = appId
        self.packages = packages
        self.policy = policy
        self.releases = releases
    }

    /// Whether a connect declaring `packageName` is allowed by the package policy.
    package func allowsPackage(_ packageName: String?) -> Bool {
        if packages.contains(Self.anyPackage) {
            return true
        }
        guard let packageName else {
            return false
        }
        return packages.contains(packageName)
    }

    /// The update decision for an install of `buildNumber` on `platform` / `packageName`.
    ///
    /// Candidates are the releases for that platform whose package is `packageName` or unset. If
    /// none is newer than `buildNumber`, the action is `none` (with the newest known build, if any).
    /// Otherwise the newest candidate is offered: `forced` when any newer candidate is marked forced
    /// or `buildNumber` is below a newer candidate's `minimumSupportedBuild`, else `optional`.
    package func updateDecision(platform: String, packageName: String, buildNumber: Int64) -> UpdateCheckResult {
        let candidates = releases.filter { release in
            release.platform == platform && (release.packageName == nil || release.packageName == packageName)
        }
        guard let latest = candidates.max(by: { $0.buildNumber < $1.buildNumber }) else {
            return .noUpdate
        }
        let newer = candidates.filter { $0.buildNumber > buildNumber }
        guard !newer.isEmpty else {
            return UpdateCheckResult(
                action: .none, latestVersionName: latest.versionName, latestBuildNumber: latest.buildNumber)
        }
        let forced = newer.contains { release in
            release.forced || (release.minimumSupportedBuild.map { buildNumber < $0 } ?? false)
        }
        return UpdateCheckResult(
            action: forced ? .forced : .optional, latestVersionName: latest.versionName,
            latestBuildNumber: latest.buildNumber, releaseNotes: latest.releaseNotes, downloadUrl: latest.downloadUrl)
    }
}
