/// The network address of the peer that sent a request.
public struct HTTPRemoteAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric host: dotted IPv4 (also for IPv4-mapped IPv6 peers) or IPv6 text.
    public var host: String
    /// The peer's TCP port.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, with IPv6 hosts in brackets.
    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
