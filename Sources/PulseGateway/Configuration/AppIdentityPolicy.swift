import PulseJSON

/// Per-app identity settings (config key `appIdentity`, reloaded on SIGHUP): the defaults the
/// identity rules use after the resource attributes and the request headers, and whether a
/// resource that identifies no device gets a derived identity or fails the request with 400
/// (docs/mapping.md, "Identity").
///
/// ```json
/// "appIdentity": {
///   "default": {"missingIdentity": "derive"},
///   "apps": {"shop": {"missingIdentity": "refuse", "platform": "android", "packageName": "com.example.shop"}}
/// }
/// ```
///
/// Every field is optional; an app's fields override the `default` ones one by one.
package typealias AppIdentityPolicy = PerAppSettings<AppIdentitySettings>

extension PerAppSettings where Entry == AppIdentitySettings {
    /// One app's identity settings (or the `default` ones).
    package typealias Settings = AppIdentitySettings
    /// What happens to a resource that no rule gives a device or installation id.
    package typealias MissingIdentity = AppIdentitySettings.MissingIdentity

    /// A policy with the given default settings (``PerAppSettings/init(default:apps:)`` without
    /// them: derive, no default values).
    package init(defaults: Settings, apps: [String: Settings] = [:]) {
        self.init(default: defaults, apps: apps)
    }

    /// `default`: the settings of every app.
    package var defaults: Settings {
        get { self.default }
        set { self.default = newValue }
    }

    /// The settings of `app`: its own fields, then the `default` ones.
    package func settings(for app: String) -> Settings { entry(for: app) }

    /// Reads the `appIdentity` config object, recording every problem (with its key path) in
    /// `reader`; `nil` when there was one.
    init?(reading node: JSONNode, _ reader: inout ConfigurationReader) {
        self.init(reading: node, path: "appIdentity", &reader, entry: AppIdentitySettings.init(reading:path:_:))
    }
}

/// One app's identity settings (or the `default` ones) of ``AppIdentityPolicy``; `nil` fields are
/// not set.
package struct AppIdentitySettings: AppOverridable {
    /// What happens to a resource that no rule gives a device or installation id, platform or SDK
    /// version.
    package enum MissingIdentity: String, Sendable, Equatable {
        /// The gateway derives the missing values (docs/mapping.md) and marks them as derived.
        case derive
        /// The request fails with 400 naming the missing field.
        case refuse
    }

    /// `missingIdentity`; unset means ``MissingIdentity/derive``.
    package var missingIdentity: MissingIdentity?
    /// `platform`, lower-cased like the header.
    package var platform: String?
    /// `sdkVersion`.
    package var sdkVersion: String?
    /// `appVersion`.
    package var appVersion: String?
    /// `buildNumber`.
    package var buildNumber: Int64?
    /// `packageName`.
    package var packageName: String?
    /// `deviceType` (CONNECT only).
    package var deviceType: String?

    /// No field set.
    package init() {}

    /// Settings with the given fields set.
    package init(
        missingIdentity: MissingIdentity? = nil, platform: String? = nil, sdkVersion: String? = nil,
        appVersion: String? = nil, buildNumber: Int64? = nil, packageName: String? = nil,
        deviceType: String? = nil
    ) {
        self.missingIdentity = missingIdentity
        self.platform = platform
        self.sdkVersion = sdkVersion
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.packageName = packageName
        self.deviceType = deviceType
    }

    /// These settings with every unset field taken from `base`.
    package func over(_ base: AppIdentitySettings) -> AppIdentitySettings {
        AppIdentitySettings(
            missingIdentity: missingIdentity ?? base.missingIdentity, platform: platform ?? base.platform,
            sdkVersion: sdkVersion ?? base.sdkVersion, appVersion: appVersion ?? base.appVersion,
            buildNumber: buildNumber ?? base.buildNumber, packageName: packageName ?? base.packageName,
            deviceType: deviceType ?? base.deviceType)
    }

    /// Whether a resource without a device or installation id (or platform, or SDK version)
    /// gets derived values instead of a 400.
    var derivesMissingIdentity: Bool { (missingIdentity ?? .derive) == .derive }

    /// Reads one entry at `path`, recording its problems in `reader` (the fields read so far when
    /// there were some).
    init(reading node: JSONNode, path: String, _ reader: inout ConfigurationReader) {
        var settings = AppIdentitySettings()
        defer { self = settings }
        guard reader.object(path, node) else { return }
        for (key, value) in node.members {
            let name = "\(path).\(key)"
            switch key {
            case "missingIdentity":
                guard let choice = value.string.flatMap(MissingIdentity.init(rawValue:)) else {
                    reader.fail(name, "must be \"derive\" or \"refuse\"")
                    continue
                }
                settings.missingIdentity = choice
            case "platform": settings.platform = reader.nonEmptyString(name, value)?.lowercased()
            case "sdkVersion": settings.sdkVersion = reader.nonEmptyString(name, value)
            case "appVersion": settings.appVersion = reader.nonEmptyString(name, value)
            case "buildNumber":
                guard let number = value.int64 else {
                    reader.fail(name, "must be an integer")
                    continue
                }
                settings.buildNumber = number
            case "packageName": settings.packageName = reader.nonEmptyString(name, value)
            case "deviceType": settings.deviceType = reader.nonEmptyString(name, value)
            default:
                reader.fail(name, "unknown config key")
            }
        }
    }
}
