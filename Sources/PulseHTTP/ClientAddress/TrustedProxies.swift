/// The reverse proxies whose `X-Forwarded-For` header is believed, and the rule that picks a
/// request's client address.
///
/// A device can put anything in `X-Forwarded-For`, so the header means something only when the
/// TCP peer is a proxy the operator runs. The rule (``clientAddress(peer:forwardedFor:)``):
///
/// 1. The TCP peer is not trusted (or no proxies are configured): the peer is the client, the
///    header is ignored.
/// 2. Otherwise the entries of every `X-Forwarded-For` field, in order, are walked from the right
///    (each trusted proxy appended the address it saw). The first entry that is not a trusted
///    proxy is the client: the right-most untrusted entry. Entries to its left were written by
///    the client itself and are never used.
/// 3. An entry that is not a numeric address (`unknown`, a host name, garbage) stops the walk: the
///    client is the last address vouched for, i.e. the trusted proxy that appended the entry (or
///    the peer).
/// 4. When every entry is a trusted proxy, the left-most entry is the client; when the header is
///    absent or empty, the peer is.
///
/// Entries may carry a port (`192.0.2.7:5123`, `[2001:db8::7]:443`), which is dropped; empty
/// entries are skipped.
package struct TrustedProxies: Sendable, Equatable {
    /// The trusted blocks, in configuration order.
    package let networks: [IPNetwork]

    /// No trusted proxies: `X-Forwarded-For` is always ignored.
    package static let none = TrustedProxies(networks: [])

    /// Creates the set from addresses and CIDR blocks (`"127.0.0.1"`, `"10.0.0.0/8"`, `"::1"`,
    /// `"fd00::/8"`).
    ///
    /// - Throws: ``HTTPServerError`` with ``HTTPServerError/Code/invalidConfiguration`` naming the
    ///   first entry that does not parse.
    package init(_ entries: [String]) throws(HTTPServerError) {
        var networks: [IPNetwork] = []
        for entry in entries { networks.append(try IPNetwork(parsing: entry)) }
        self.networks = networks
    }

    /// Creates the set from parsed blocks.
    package init(networks: [IPNetwork]) {
        self.networks = networks
    }

    /// `true` when no proxy is trusted.
    package var isEmpty: Bool { networks.isEmpty }

    /// `true` when `address` lies in one of the trusted blocks.
    package func isTrusted(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// The client address of a request: ``clientAddress(peer:forwardedFor:)`` with the request's
    /// peer and its `X-Forwarded-For` fields; `nil` when the peer is unknown.
    package func clientAddress(of request: HTTPRequest) -> String? {
        guard let peer = request.remoteAddress?.host else { return nil }
        if isEmpty { return peer }
        return clientAddress(peer: peer, forwardedFor: request.headers.values(for: "X-Forwarded-For"))
    }

    /// The client address given the TCP peer's numeric host and the `X-Forwarded-For` field
    /// values in the order received (see the type's description for the rule).
    ///
    /// - Returns: the client's address in canonical text (dotted IPv4, compressed IPv6), or
    ///   `peer` unchanged when the header is not used.
    package func clientAddress(peer: String, forwardedFor fields: [String]) -> String {
        guard !isEmpty, !fields.isEmpty, let peerAddress = IPAddress(peer), isTrusted(peerAddress) else {
            return peer
        }
        var vouched = peerAddress
        for field in fields.reversed() {
            for entry in field.split(separator: ",", omittingEmptySubsequences: false).reversed() {
                let trimmed = entry.trimmingSpaces
                if trimmed.isEmpty { continue }
                guard let address = Self.address(ofEntry: trimmed) else { return vouched.description }
                guard isTrusted(address) else { return address.description }
                vouched = address
            }
        }
        return vouched.description
    }

    /// Parses one entry: an address, optionally with a port (`a.b.c.d:port`, `[v6]:port`).
    static func address(ofEntry entry: Substring) -> IPAddress? {
        if entry.hasPrefix("[") {
            guard let close = entry.firstIndex(of: "]") else { return nil }
            let rest = entry[entry.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            return IPAddress(String(entry[...close]))
        }
        let colons = entry.reduce(0) { $0 + ($1 == ":" ? 1 : 0) }
        if colons == 1, let colon = entry.firstIndex(of: ":") {
            // IPv4 with a port; bare IPv6 has at least two colons.
            guard isPort(entry[entry.index(after: colon)...]) else { return nil }
            let host = entry[..<colon]
            guard !host.contains(":") else { return nil }
            return IPAddress(String(host)).flatMap { $0.isIPv4 ? $0 : nil }
        }
        return IPAddress(String(entry))
    }

    private static func isPort(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return false }
        return Int(text).map { $0 <= 65535 } ?? false
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (the optional whitespace around list elements).
    var trimmingSpaces: Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
