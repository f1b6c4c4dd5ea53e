import PulseKit

/// The network address of the peer that sent a request.
package struct HTTPRemoteAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric host: dotted IPv4 (also for IPv4-mapped IPv6 peers) or IPv6 text.
    package var host: String
    /// The peer's TCP port.
    package var port: Int

    /// Creates an address.
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with IPv6 hosts in brackets.
    package var description: String {
        HostPort.text(host: host, port: port)
    }
}
