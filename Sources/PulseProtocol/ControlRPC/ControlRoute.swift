/// A `BIDIRECTIONAL_CONTROL_RPC` route: a stable, lower-case dotted name such as `telemetry.flush`.
///
/// Syntax (checked by every initialiser and by decoding): 2 to 8 segments separated by `.`, each
/// segment starting with `a`-`z` followed by `a`-`z`, `0`-`9` or `_`, at most 128 bytes in total. A
/// route that breaks the syntax makes the request malformed (code 400). Syntax says nothing about
/// support: each peer allowlists the routes it serves and answers any other well-formed route with code
/// 404, including routes outside the allocated namespaces (see ``namespace``).

import PulseKit

public struct ControlRoute: Sendable, Hashable, CustomStringConvertible {
    /// The allocated route namespaces.
    public enum Namespace: String, Sendable, Hashable, CaseIterable {
        /// `config.*`
        case config
        /// `telemetry.*`
        case telemetry
        /// `audit.*`
        case audit
    }

    /// The route as written on the wire.
    public let name: String

    /// The longest accepted route, in bytes.
    public static let maxLength = 128
    /// The most segments a route may have.
    public static let maxSegments = 8

    /// `telemetry.flush`: ask the peer to flush its telemetry queue (the contract's example route).
    public static let telemetryFlush = ControlRoute(checked: "telemetry.flush")

    /// Validates `name`, throwing ``PulseProtocolError/Code/invalidValue`` when it is not a well-formed
    /// route.
    public init(validating name: String) throws {
        guard Self.isWellFormed(name) else {
            throw PulseProtocolError(
                .invalidValue,
                "control route \(PulseProtocolError.quoted(name)) is not a lower-case dotted name")
        }
        self.name = name
    }

    /// Validates `name`, returning `nil` when it is not a well-formed route.
    public init?(_ name: String) {
        guard Self.isWellFormed(name) else {
            return nil
        }
        self.name = name
    }

    private init(checked name: String) {
        precondition(Self.isWellFormed(name))
        self.name = name
    }

    /// The allocated namespace (first segment), or `nil` when the route lies outside `config`,
    /// `telemetry` and `audit`; such a route is well-formed but never supported.
    public var namespace: Namespace? {
        guard let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) else {
            return nil
        }
        return Namespace(rawValue: String(name[..<dot]))
    }

    public var description: String { name }

    /// Whether `name` satisfies the route syntax.
    public static func isWellFormed(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= maxLength else {
            return false
        }
        var segments = 1
        var atSegmentStart = true
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                guard !atSegmentStart else {
                    return false
                }
                segments += 1
                atSegmentStart = true
                continue
            }
            let isLower = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")
            let isDigit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            if atSegmentStart {
                guard isLower else {
                    return false
                }
                atSegmentStart = false
            } else {
                guard isLower || isDigit || byte == UInt8(ascii: "_") else {
                    return false
                }
            }
        }
        return !atSegmentStart && segments >= 2 && segments <= maxSegments
    }
}
