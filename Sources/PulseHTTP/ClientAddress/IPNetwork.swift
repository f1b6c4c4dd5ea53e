/// A block of addresses in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`), or a single address.

import PulseKit

package struct IPNetwork: Sendable, Hashable, CustomStringConvertible {
    /// The first address of the block.
    package let address: IPAddress
    /// The prefix length in the address's own family: 0...32 for IPv4, 0...128 for IPv6.
    package let prefixLength: Int

    /// Parses `ADDRESS/PREFIX` or a bare `ADDRESS` (a block of one: `/32` or `/128`).
    ///
    /// The address must be the first of its block: `10.0.0.1/8` is refused, because it usually
    /// means a typo rather than `10.0.0.0/8`.
    ///
    /// - Throws: ``HTTPServerError`` with ``HTTPServerError/Code/invalidConfiguration``.
    package init(parsing text: String) throws(HTTPServerError) {
        func fail(_ reason: String) -> HTTPServerError {
            HTTPServerError(.invalidConfiguration, "\"\(text)\" is not an IP address or CIDR block: \(reason)")
        }
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(String(parts[0])) else { throw fail("bad address") }
        let width = address.isIPv4 ? 32 : 128
        var prefix = width
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                let value = Int(digits), value <= width
            else { throw fail("the prefix length must be 0...\(width)") }
            prefix = value
        }
        guard Self.mask(address.bytes, bits: prefix + (128 - width)) == address.bytes else {
            throw fail("bits are set after the /\(prefix) prefix")
        }
        self.address = address
        self.prefixLength = prefix
    }

    /// `true` when `candidate` lies in the block. An IPv4 block matches IPv4 addresses and their
    /// IPv4-mapped IPv6 forms; `::/0` matches everything.
    package func contains(_ candidate: IPAddress) -> Bool {
        let bits = prefixLength + (address.isIPv4 ? 96 : 0)
        return Self.mask(candidate.bytes, bits: bits) == address.bytes
    }

    /// `ADDRESS/PREFIX` in canonical form.
    package var description: String { "\(address)/\(prefixLength)" }

    /// `bytes` with every bit after the first `bits` cleared.
    private static func mask(_ bytes: [UInt8], bits: Int) -> [UInt8] {
        var result = bytes
        for index in result.indices {
            let kept = min(8, max(0, bits - index * 8))
            result[index] &= kept == 0 ? 0 : UInt8(truncatingIfNeeded: 0xFF << (8 - kept))
        }
        return result
    }
}
