/// One problem found in a configuration file: where (a key path such as
/// `appLimits.apps.shop.burst` or `apps[2].packages`) and what is wrong with it.
///
/// Configuration checks collect every problem instead of stopping at the first, so
/// `pulsegate validate` can list them all; the servers run the same checks at start and on reload
/// and refuse the file when the list is not empty. Messages name keys and expected values, never
/// secrets (app keys, TLS key material).
package struct ConfigurationProblem: Sendable, Hashable, CustomStringConvertible {
    /// The key path, dot-separated, with `[index]` for array elements; `""` for the whole file.
    package var path: String
    /// What is wrong, in a sentence fragment (`must be a positive integer`).
    package var message: String

    /// Creates a problem.
    package init(_ path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    /// `path: message`, or just the message for the whole file.
    package var description: String { path.isEmpty ? message : "\(path): \(message)" }

    /// `1 problem` or `N problems`.
    package static func count(_ problems: [ConfigurationProblem]) -> String {
        problems.count == 1 ? "1 problem" : "\(problems.count) problems"
    }

    /// The problems as one line each, for an error message: `"a: x; b: y"`.
    package static func summary(_ problems: [ConfigurationProblem]) -> String {
        problems.map(\.description).joined(separator: "; ")
    }
}
