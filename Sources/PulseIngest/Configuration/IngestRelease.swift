/// A published build, offered by CLIENT_APP_UPDATE_CHECK.
///
/// Builds are ordered by ``buildNumber`` (the monotonic platform build number, `CFBundleVersion` on
/// iOS), never by comparing ``versionName``s.
package struct IngestRelease: Sendable, Hashable, Codable {
    /// The platform the build is for, such as `ios` or `android` (compared exactly).
    package var platform: String
    /// The package the build is for; `nil` means every package of the app.
    package var packageName: String?
    /// The display version, such as `2.5.0`.
    package var versionName: String?
    /// The monotonic build number.
    package var buildNumber: Int64
    /// Release notes shown to the user.
    package var releaseNotes: String?
    /// Where to get the build.
    package var downloadUrl: String?
    /// Whether installs older than this build must update (`forced`) rather than may (`optional`).
    package var forced: Bool
    /// Installs with a build number below this must update (`forced`) even when no newer release
    /// is marked ``forced``.
    package var minimumSupportedBuild: Int64?

    /// Creates a release.
    package init(
        platform: String, packageName: String? = nil, versionName: String? = nil, buildNumber: Int64,
        releaseNotes: String? = nil, downloadUrl: String? = nil, forced: Bool = false,
        minimumSupportedBuild: Int64? = nil
    ) {
        self.platform = platform
        self.packageName = packageName
        self.versionName = versionName
        self.buildNumber = buildNumber
        self.releaseNotes = releaseNotes
        self.downloadUrl = downloadUrl
        self.forced = forced
        self.minimumSupportedBuild = minimumSupportedBuild
    }

    enum CodingKeys: String, CodingKey {
        case platform, packageName, versionName, buildNumber, releaseNotes, downloadUrl, forced
        case minimumSupportedBuild
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        platform = try container.decode(String.self, forKey: .platform)
        packageName = try container.decodeIfPresent(String.self, forKey: .packageName)
        versionName = try container.decodeIfPresent(String.self, forKey: .versionName)
        buildNumber = try container.decode(Int64.self, forKey: .buildNumber)
        releaseNotes = try container.decodeIfPresent(String.self, forKey: .releaseNotes)
        downloadUrl = try container.decodeIfPresent(String.self, forKey: .downloadUrl)
        forced = try container.decodeIfPresent(Bool.self, forKey: .forced) ?? false
        minimumSupportedBuild = try container.decodeIfPresent(Int64.self, forKey: .minimumSupportedBuild)
    }
}
