/// `HOST:PORT` text with brackets around an IPv6 host (`127.0.0.1:6000`, `[::1]:6000`): the one
/// reader and writer of socket addresses for the gateway's upstream and listen addresses, the
/// ingest server's listen address and the HTTP peer address.
package enum HostPort {
    /// Why a text is not `HOST:PORT`.
    package enum Problem: Error, Sendable, Equatable {
        /// `[` without its `]`.
        case unclosedBracket
        /// `]` not followed by `:PORT`.
        case noPortAfterBracket
        /// No `:` at all.
        case noPort
        /// An IPv6 host without brackets (refused unless the caller allows it).
        case unbracketedIPv6
        /// Nothing before the `:`.
        case noHost
        /// The port is not a whole number from 0 to 65535.
        case invalidPort
    }

    /// `HOST:PORT`, with brackets around a host that contains `:` (IPv6).
    package static func text(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Splits `HOST:PORT` or `[IPv6]:PORT` into the host (without brackets) and a port in 0...65535.
    /// With `allowsUnbracketedIPv6` the port follows the last `:` (`::1:6000` is host `::1`);
    /// without it such a host is ``Problem/unbracketedIPv6``.
    package static func parse(
        _ text: Substring, allowsUnbracketedIPv6: Bool
    ) throws(Problem) -> (host: String, port: Int) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .unclosedBracket }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw .noPortAfterBracket }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw .noPort }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if !allowsUnbracketedIPv6 && host.contains(":") { throw .unbracketedIPv6 }
        }
        guard !host.isEmpty else { throw .noHost }
        guard let port = Int(portText), (0...65_535).contains(port) else { throw .invalidPort }
        return (String(host), port)
    }
}
