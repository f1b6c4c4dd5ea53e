public import PulseJSON

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

extension UpdateCheckResult: PulseJSONCodable {
    public init(jsonNode node: JSONNode) throws(PulseProtocolError) {
        let o = try JSONObjectReader(node)
        action = try o.optionalString("action").map(UpdateAction.init(wireValue:)) ?? .none
        latestVersionName = try o.optionalString("latestVersionName")
        latestBuildNumber = try o.optionalInt64("latestBuildNumber")
        releaseNotes = try o.optionalString("releaseNotes")
        downloadUrl = try o.optionalString("downloadUrl")
    }

    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writeFields(to: &writer)
        writer.endObject()
    }

    /// Writes the five fields without braces (shared with the envelope-root compatibility copy).
    func writeFields(to writer: inout JSONWriter) {
        writer.field("action", action.rawValue)
        writer.field("latestVersionName", latestVersionName)
        writer.field("latestBuildNumber", latestBuildNumber)
        writer.field("releaseNotes", releaseNotes)
        writer.field("downloadUrl", downloadUrl)
    }
}
