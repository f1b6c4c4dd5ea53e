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
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw IngestError(.invalidConfiguration, "address '\(text)' has an unclosed '['")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                throw IngestError(.invalidConfiguration, "address '\(text)' needs a port after ']'")
            }
            portText = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw IngestError(.invalidConfiguration, "address '\(text)' must be HOST:PORT")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw IngestError(.invalidConfiguration, "IPv6 address '\(text)' must be written as [HOST]:PORT")
            }
        }
        guard !host.isEmpty else {
            throw IngestError(.invalidConfiguration, "address '\(text)' has no host")
        }
        guard let port = Int(portText), (0...65_535).contains(port) else {
            throw IngestError(.invalidConfiguration, "address '\(text)' has an invalid port")
        }
        self.host = String(host)
        self.port = port
    }

    /// `HOST:PORT`, with brackets around an IPv6 host.
    package var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
