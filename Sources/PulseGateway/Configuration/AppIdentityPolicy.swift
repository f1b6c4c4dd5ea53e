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
public struct AppIdentityPolicy: Sendable, Equatable {
    /// What happens to a resource that no rule gives a device or installation id, platform or SDK
    /// version.
    public enum MissingIdentity: String, Sendable, Equatable {
        /// The gateway derives the missing values (docs/mapping.md) and marks them as derived.
        case derive
        /// The request fails with 400 naming the missing field.
        case refuse
    }

    /// One app's settings (or the `default` ones); `nil` fields are not set.
    public struct Settings: Sendable, Equatable {
        /// `missingIdentity`; unset means ``MissingIdentity/derive``.
        public var missingIdentity: MissingIdentity?
        /// `platform`, lower-cased like the header.
        public var platform: String?
        /// `sdkVersion`.
        public var sdkVersion: String?
        /// `appVersion`.
        public var appVersion: String?
        /// `buildNumber`.
        public var buildNumber: Int64?
        /// `packageName`.
        public var packageName: String?
        /// `deviceType` (CONNECT only).
        public var deviceType: String?

        /// Settings with the given fields set.
        public init(
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
        func over(_ base: Settings) -> Settings {
            Settings(
                missingIdentity: missingIdentity ?? base.missingIdentity, platform: platform ?? base.platform,
                sdkVersion: sdkVersion ?? base.sdkVersion, appVersion: appVersion ?? base.appVersion,
                buildNumber: buildNumber ?? base.buildNumber, packageName: packageName ?? base.packageName,
                deviceType: deviceType ?? base.deviceType)
        }

        /// Whether a resource without a device or installation id (or platform, or SDK version)
        /// gets derived values instead of a 400.
        var derivesMissingIdentity: Bool { (missingIdentity ?? .derive) == .derive }
    }

    /// `default`: the settings of every app.
    public var defaults: Settings
    /// `apps`: per App ID, over ``defaults``.
    public var apps: [String: Settings]

    /// A policy with the given settings (none by default: derive, no default values).
    public init(defaults: Settings = Settings(), apps: [String: Settings] = [:]) {
        self.defaults = defaults
        self.apps = apps
    }

    /// The settings of `app`: its own fields, then the `default` ones.
    public func settings(for app: String) -> Settings {
        guard let own = apps[app] else { return defaults }
        return own.over(defaults)
    }

    /// Reads the `appIdentity` config object, recording every problem (with its key path) in
    /// `reader`; `nil` when there was one.
    init?(reading node: JSONNode, _ reader: inout ConfigurationReader) {
        guard reader.object("appIdentity", node) else { return nil }
        let before = reader.problems.count
        var defaults = Settings()
        var apps: [String: Settings] = [:]
        for (key, value) in node.members {
            switch key {
            case "default":
                defaults = Self.settings(value, path: "appIdentity.default", &reader)
            case "apps":
                guard reader.object("appIdentity.apps", value) else { continue }
                for (app, settings) in value.members {
                    guard IntakeHeaders.isValidIdentifier(app) else {
                        reader.fail("appIdentity.apps.\(app)", "app ids must be 1-128 characters of [A-Za-z0-9._~:-]")
                        continue
                    }
                    apps[app] = Self.settings(settings, path: "appIdentity.apps." + app, &reader)
                }
            default:
                reader.fail("appIdentity.\(key)", "unknown config key")
            }
        }
        guard reader.problems.count == before else { return nil }
        self.init(defaults: defaults, apps: apps)
    }

    private static func settings(_ node: JSONNode, path: String, _ reader: inout ConfigurationReader) -> Settings {
        var settings = Settings()
        guard reader.object(path, node) else { return settings }
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
        return settings
    }
}
