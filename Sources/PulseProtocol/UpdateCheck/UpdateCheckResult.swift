import PulseJSON

/// `CLIENT_APP_UPDATE_CHECK` (biz type 6) success data: the update decision.
///
/// Wire keys in canonical order: `action`, `latestVersionName`, `latestBuildNumber`, `releaseNotes`,
/// `downloadUrl`. Everything but `action` may be `null`; an absent or unknown `action` means `none`.
public struct UpdateCheckResult: Sendable, Hashable {
    /// What the app should do.
    public var action: UpdateAction
    /// The display version of the latest build.
    public var latestVersionName: String?
    /// The build number of the latest build.
    public var latestBuildNumber: Int64?
    /// Release notes for the latest build.
    public var releaseNotes: String?
    /// Where to download the latest build.
    public var downloadUrl: String?

    /// The fail-open answer: no update, all other fields `null`.
    public static let noUpdate = UpdateCheckResult(action: .none)

    /// Creates a result.
    public init(
        action: UpdateAction, latestVersionName: String? = nil, latestBuildNumber: Int64? = nil,
        releaseNotes: String? = nil, downloadUrl: String? = nil
    ) {
        self.action = action
        self.latestVersionName = latestVersionName
        self.latestBuildNumber = latestBuildNumber
        self.releaseNotes = releaseNotes
        self.downloadUrl = downloadUrl
    }
}

extension UpdateCheckResult: PulseJSONCodable, WireObjectCodable {
    static let wire = WireObject(
        UpdateCheckResult.noUpdate,
        .defaulted("action", \.action), .nullable("latestVersionName", \.latestVersionName),
        .nullable("latestBuildNumber", \.latestBuildNumber), .nullable("releaseNotes", \.releaseNotes),
        .nullable("downloadUrl", \.downloadUrl))
}
