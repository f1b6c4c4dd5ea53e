import Glibc

/// A numeric IPv4 or IPv6 address.
///
/// Stored as 16 bytes; an IPv4 address is kept as its IPv4-mapped IPv6 form (`::ffff:a.b.c.d`), so
/// `10.0.0.1` and `::ffff:10.0.0.1` are the same address, as they are the same peer on a dual-stack
/// socket.
package struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address in network byte order, IPv4 as IPv4-mapped IPv6.
    let bytes: [UInt8]

    /// Parses a numeric address: dotted IPv4 (`192.0.2.7`), IPv6 text (`2001:db8::1`,
    /// `::ffff:192.0.2.7`), optionally in brackets (`[2001:db8::1]`). Host names, zone ids
    /// (`fe80::1%eth0`) and surrounding whitespace are not accepted.
    ///
    /// - Returns: `nil` when `text` is not such an address.
    package init?(_ text: String) {
        var literal = Substring(text)
        if literal.hasPrefix("[") {
            guard literal.hasSuffix("]") else { return nil }
            literal = literal.dropFirst().dropLast()
        }
        // inet_pton needs a C string; a bound keeps a hostile header from costing more than this.
        guard !literal.isEmpty, literal.utf8.count <= 45 else { return nil }
        let string = String(literal)
        var v4 = in_addr()
        if !string.contains(":") {
            guard inet_pton(AF_INET, string, &v4) == 1 else { return nil }
            let octets = withUnsafeBytes(of: &v4) { Array($0) }
            bytes = Self.mappedPrefix + octets
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, string, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    /// `true` for IPv4 addresses (including IPv4-mapped IPv6 text).
    package var isIPv4: Bool { bytes.starts(with: Self.mappedPrefix) }

    /// The canonical text: dotted decimal for IPv4, RFC 5952 compressed form for IPv6.
    package var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written: Bool = buffer.withUnsafeMutableBufferPointer { output in
            if isIPv4 {
                var v4 = in_addr()
                withUnsafeMutableBytes(of: &v4) { $0.copyBytes(from: bytes[12..<16]) }
                return inet_ntop(AF_INET, &v4, output.baseAddress, socklen_t(output.count)) != nil
            }
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            return inet_ntop(AF_INET6, &v6, output.baseAddress, socklen_t(output.count)) != nil
        }
        guard written else { return "?" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `::ffff:` — the first 12 bytes of an IPv4-mapped IPv6 address.
    static let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
}
