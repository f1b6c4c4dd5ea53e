/// Removal of sensitive values before anything reaches the outbox (see `docs/mapping.md`).
enum Redaction {
    /// The replacement for a sensitive value.
    static let placeholder = "[REDACTED]"

    /// Key fragments (lower-case) that make an attribute sensitive wherever they appear in its key.
    static let sensitiveFragments: [String] = [
        "password", "passwd", "secret", "token", "api_key", "apikey", "authorization", "cookie", "set-cookie",
        "credential", "session_key",
    ]

    /// Attributes whose value is a URL that loses its query string and fragment.
    static let urlKeys: Set<String> = ["url.full", "http.url", "http.target", "url.original"]

    /// Attributes dropped entirely.
    static let droppedKeys: Set<String> = ["url.query", "url.fragment"]

    /// Whether the value of `key` must be replaced by the placeholder.
    static func isSensitive(_ key: String) -> Bool {
        let lowered = key.lowercased()
        for fragment in sensitiveFragments where lowered.contains(fragment) {
            return true
        }
        return false
    }

    /// `url` without its query string and fragment (`https://h/p?q#f` → `https://h/p`).
    static func strippingQueryAndFragment(_ url: String) -> String {
        guard let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<cut])
    }
}
