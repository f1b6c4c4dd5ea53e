/// A numeric `HOST:PORT` to listen on, such as `127.0.0.1:6000`, `[::1]:6000` or `0.0.0.0:0`.

import PulseKit

package struct IngestListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric host, without brackets.
    package var host: String
    /// The TCP port; 0 picks a free one.
    package var port: Int

    /// Creates an address.
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`; an IPv6 host is written in brackets (`[::1]:6000`).
    ///
    /// - Throws: ``IngestError/Code/invalidConfiguration`` for a missing host or an invalid port.
    package init(parsing text: String) throws(IngestError) {
        do {
            (self.host, self.port) = try HostPort.parse(Substring(text), allowsUnbracketedIPv6: false)
        } catch {
            let problem =
                switch error {
                case .unclosedBracket: "address '\(text)' has an unclosed '['"
                case .noPortAfterBracket: "address '\(text)' needs a port after ']'"
                case .noPort: "address '\(text)' must be HOST:PORT"
                case .unbracketedIPv6: "IPv6 address '\(text)' must be written as [HOST]:PORT"
                case .noHost: "address '\(text)' has no host"
                case .invalidPort: "address '\(text)' has an invalid port"
                }
            throw IngestError(.invalidConfiguration, problem)
        }
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    package var description: String { HostPort.text(host: host, port: port) }
}
