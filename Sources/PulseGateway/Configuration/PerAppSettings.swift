import PulseJSON

/// Settings that one app's entry overrides field by field: the fields it leaves unset come from
/// the `default` entry (``AppIdentityPolicy/Settings``, ``AppLimits/Limit``).
package protocol AppOverridable: Sendable, Equatable {
    /// No field set.
    init()
    /// `self` with the fields it leaves unset taken from `base`.
    func over(_ base: Self) -> Self
}

/// A default plus per-app overrides: the shape of the config keys `appIdentity` and `appLimits`,
///
/// ```json
/// {"default": {…}, "apps": {"<App ID>": {…}}}
/// ```
///
/// where an app's entry overrides the default one field by field.
package struct PerAppSettings<Entry: AppOverridable>: Sendable, Equatable {
    /// What applies to every app without an entry of its own (and fills its entry's gaps).
    package var `default`: Entry
    /// Entries by App ID.
    package var apps: [String: Entry]

    /// Settings with the given entries (by default none: nothing set).
    package init(default: Entry = Entry(), apps: [String: Entry] = [:]) {
        self.default = `default`
        self.apps = apps
    }

    /// What applies to `app`: its own fields, then the default ones.
    package func entry(for app: String) -> Entry {
        apps[app].map { $0.over(`default`) } ?? `default`
    }

    /// Reads the config object at `path` (`appIdentity`, `appLimits`), each entry with `readEntry`
    /// (given the entry and its key path; it records its own problems in `reader`). Every problem
    /// is recorded with its key path; `nil` when there was one.
    init?(
        reading node: JSONNode, path: String, _ reader: inout ConfigurationReader,
        entry readEntry: (JSONNode, String, inout ConfigurationReader) -> Entry
    ) {
        guard reader.object(path, node) else { return nil }
        let before = reader.problems.count
        var settings = PerAppSettings()
        for (key, value) in node.members {
            switch key {
            case "default":
                settings.default = readEntry(value, path + ".default", &reader)
            case "apps":
                guard reader.object(path + ".apps", value) else { continue }
                for (app, entry) in value.members {
                    let entryPath = "\(path).apps.\(app)"
                    if !IntakeHeaders.isValidIdentifier(app) {
                        reader.fail(entryPath, "app ids must be 1-128 characters of [A-Za-z0-9._~:-]")
                    }
                    settings.apps[app] = readEntry(entry, entryPath, &reader)
                }
            default:
                reader.fail("\(path).\(key)", "unknown config key (expected default or apps)")
            }
        }
        guard reader.problems.count == before else { return nil }
        self = settings
    }
}
