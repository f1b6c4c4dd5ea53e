import CMicroHTTPD
import Glibc
import PulseKit

/// Where the daemon listens: the daemon flags plus an optional socket address, built from a
/// configuration's numeric host and port.
struct ListenAddress {
    /// Extra `MHD_USE_*` flags the address needs (IPv6, dual stack).
    var flags: UInt32 = 0
    /// The address to bind, or `nil` to let libmicrohttpd bind the wildcard address of `flags`.
    var storage: sockaddr_storage?

    init(host: String, port: Int) throws(HTTPServerError) {
        let networkPort = UInt16(port).bigEndian
        switch host {
        case "::", "[::]", "*":
            flags = MHD_USE_DUAL_STACK.rawValue
            return
        case "0.0.0.0", "":
            return
        default:
            break
        }
        var literal = host == "localhost" ? "127.0.0.1" : host
        if literal.hasPrefix("[") && literal.hasSuffix("]") {
            literal = String(literal.dropFirst().dropLast())
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        var storage = sockaddr_storage()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = networkPort
                address.pointee.sin_addr = v4
            }
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            flags = MHD_USE_IPv6.rawValue
            withUnsafeMutableBytes(of: &storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = networkPort
                address.pointee.sin6_addr = v6
            }
        } else {
            throw HTTPServerError(.invalidConfiguration, "host \"\(host)\" is not a numeric IPv4 or IPv6 address")
        }
        self.storage = storage
    }
}
