import PulseHashing
import PulseKit

/// Per-app bearer keys (config key `appKeys`): a request for an app that has keys must carry
/// `Authorization: Bearer <one of them>`, else it gets 401. Apps without keys stay open.
///
/// ```swift
/// let keys = try AppKeys(["shop": ["key-1", "key-2"]])
/// var policy = GatewayPolicy()
/// policy.appKeys = keys
/// ```
///
/// Only the SHA-256 digests of the keys are kept, and a presented key is compared against every
/// digest of its app in constant time (no early exit on the first differing byte or the first
/// match), so neither timing nor a memory dump reveals a key. Printing the value (`description`,
/// `debugDescription`, `dump`) shows the app names and key counts, never keys.
package struct AppKeys: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// SHA-256 digests of the keys, by App ID.
    private var digests: [String: [[UInt8]]]

    /// No keys: every app is open.
    package init() {
        digests = [:]
    }

    /// Keys by App ID.
    ///
    /// - Throws: ``GatewayError`` (`invalidConfiguration`) when an App ID is not 1-128 characters
    ///   of `[A-Za-z0-9._~:-]`, an app's list is empty, or a key is not 1-512 visible ASCII
    ///   characters (what fits a `Bearer` header unchanged). Messages name the app, never a key.
    package init(_ keys: [String: [String]]) throws(GatewayError) {
        var digests: [String: [[UInt8]]] = [:]
        for (app, appKeys) in keys {
            guard IntakeHeaders.isValidIdentifier(app) else {
                throw GatewayError(
                    .invalidConfiguration, "appKeys: app ids must be 1-128 characters of [A-Za-z0-9._~:-]")
            }
            guard !appKeys.isEmpty else {
                throw GatewayError(
                    .invalidConfiguration,
                    "appKeys: app \(app) has an empty key list (remove the entry to leave it open)")
            }
            for key in appKeys where !Self.isValidKey(key) {
                throw GatewayError(
                    .invalidConfiguration, "appKeys: a key of app \(app) is not 1-512 visible ASCII characters")
            }
            digests[app] = appKeys.map { SHA256.hash(Array($0.utf8)) }
        }
        self.digests = digests
    }

    /// Whether no app has keys.
    package var isEmpty: Bool { digests.isEmpty }

    /// The App IDs that have keys, sorted.
    package var apps: [String] { digests.keys.sorted() }

    /// Whether requests for `app` must present a key.
    package func requiresKey(app: String) -> Bool {
        digests[app] != nil
    }

    /// Whether a request for `app` presenting `key` (`nil`: none) may pass: always for an app
    /// without keys, else only with one of the app's keys. Constant time in the key's content.
    package func accepts(_ key: String?, app: String) -> Bool {
        guard let candidates = digests[app] else { return true }
        guard let key else { return false }
        let presented = SHA256.hash(Array(key.utf8))
        var matches: UInt8 = 0
        for candidate in candidates {
            var difference: UInt8 = 0
            for index in 0..<presented.count {
                difference |= candidate[index] ^ presented[index]
            }
            // 1 when equal, 0 otherwise, without a branch on the digest bytes.
            matches |= UInt8(truncatingIfNeeded: (Int(difference) &- 1) >> 8) & 1
        }
        return matches != 0
    }

    /// Whether `key` is 1-512 characters of visible ASCII (0x21-0x7E).
    static func isValidKey(_ key: String) -> Bool {
        let utf8 = key.utf8
        return (1...512).contains(utf8.count) && utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    package var description: String {
        "AppKeys(" + apps.map { "\($0): \(digests[$0]?.count ?? 0) keys" }.joined(separator: ", ") + ")"
    }

    package var debugDescription: String { description }

    package var customMirror: Mirror {
        Mirror(self, children: ["apps": apps], displayStyle: .struct)
    }
}
