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

    /// Parses the `appIdentity` config object.
    ///
    /// - Throws: ``GatewayError`` with `invalidConfiguration` naming the key path.
    init(parsing node: JSONNode) throws(GatewayError) {
        func fail(_ path: String, _ expected: String) -> GatewayError {
            GatewayError(.invalidConfiguration, "config key \"\(path)\" must be \(expected)")
        }
        guard node.kind == .object else { throw fail("appIdentity", "an object") }
        var defaults = Settings()
        var apps: [String: Settings] = [:]
        for (key, value) in node.members {
            switch key {
            case "default":
                defaults = try Self.settings(value, path: "appIdentity.default")
            case "apps":
                guard value.kind == .object else { throw fail("appIdentity.apps", "an object of App ID to settings") }
                for (app, settings) in value.members {
                    guard IntakeHeaders.isValidIdentifier(app) else {
                        throw GatewayError(
                            .invalidConfiguration,
                            "config key \"appIdentity.apps\": app ids must be 1-128 characters of [A-Za-z0-9._~:-]")
                    }
                    apps[app] = try Self.settings(settings, path: "appIdentity.apps." + app)
                }
            default:
                throw GatewayError(.invalidConfiguration, "unknown config key \"appIdentity.\(key)\"")
            }
        }
        self.init(defaults: defaults, apps: apps)
    }

    private static func settings(_ node: JSONNode, path: String) throws(GatewayError) -> Settings {
        func fail(_ key: String, _ expected: String) -> GatewayError {
            GatewayError(.invalidConfiguration, "config key \"\(path).\(key)\" must be \(expected)")
        }
        func text(_ key: String, _ value: JSONNode) throws(GatewayError) -> String {
            guard let string = value.string, !string.isEmpty else { throw fail(key, "a non-empty string") }
            return string
        }
        guard node.kind == .object else {
            throw GatewayError(.invalidConfiguration, "config key \"\(path)\" must be an object")
        }
        var settings = Settings()
        for (key, value) in node.members {
            switch key {
            case "missingIdentity":
                guard let choice = value.string.flatMap(MissingIdentity.init(rawValue:)) else {
                    throw fail(key, "\"derive\" or \"refuse\"")
                }
                settings.missingIdentity = choice
            case "platform": settings.platform = try text(key, value).lowercased()
            case "sdkVersion": settings.sdkVersion = try text(key, value)
            case "appVersion": settings.appVersion = try text(key, value)
            case "buildNumber":
                guard let number = value.int64 else { throw fail(key, "an integer") }
                settings.buildNumber = number
            case "packageName": settings.packageName = try text(key, value)
            case "deviceType": settings.deviceType = try text(key, value)
            default:
                throw GatewayError(.invalidConfiguration, "unknown config key \"\(path).\(key)\"")
            }
        }
        return settings
    }
}
