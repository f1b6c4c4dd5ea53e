import CLinuxEvents
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address.
struct SocketAddress: Sendable, CustomStringConvertible {
    private enum Storage: Sendable {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)
    }

    private let storage: Storage

    /// Parses a numeric IPv4 or IPv6 address (brackets around IPv6 are allowed).
    init?(numericHost host: String, port: UInt16) {
        let bare = Self.stripBrackets(host)
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, bare, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            storage = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, bare, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            storage = .v6(v6)
            return
        }
        return nil
    }

    /// Copies an address filled in by the kernel; `nil` for families other than IPv4 and IPv6.
    init?(_ raw: sockaddr_storage) {
        var raw = raw
        switch Int32(raw.ss_family) {
        case AF_INET:
            storage = .v4(withUnsafeBytes(of: &raw) { $0.load(as: sockaddr_in.self) })
        case AF_INET6:
            storage = .v6(withUnsafeBytes(of: &raw) { $0.load(as: sockaddr_in6.self) })
        default:
            return nil
        }
    }

    /// `AF_INET` or `AF_INET6`.
    var family: Int32 {
        switch storage {
        case .v4: return AF_INET
        case .v6: return AF_INET6
        }
    }

    var port: Int {
        switch storage {
        case .v4(let address): return Int(UInt16(bigEndian: address.sin_port))
        case .v6(let address): return Int(UInt16(bigEndian: address.sin6_port))
        }
    }

    /// `"127.0.0.1:6000"` or `"[::1]:6000"`.
    var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch storage {
        case .v4(var address):
            inet_ntop(AF_INET, &address.sin_addr, &text, socklen_t(text.count))
            return "\(Self.string(text)):\(port)"
        case .v6(var address):
            inet_ntop(AF_INET6, &address.sin6_addr, &text, socklen_t(text.count))
            return "[\(Self.string(text))]:\(port)"
        }
    }

    /// Calls `body` with a `sockaddr` pointer and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        switch storage {
        case .v4(var address):
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(var address):
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }

    /// Resolves `host` with `getaddrinfo` (which may block on DNS for names; numeric hosts never do).
    static func resolve(host: String, port: UInt16) throws(MsgTransRuntimeError) -> [SocketAddress] {
        if let numeric = SocketAddress(numericHost: host, port: port) {
            return [numeric]
        }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(stripBrackets(host), String(port), &hints, &list)
        guard result == 0, let list else {
            let reason = result == 0 ? "no addresses" : String(cString: gai_strerror(result))
            throw MsgTransRuntimeError(.invalidAddress, "cannot resolve host \"\(host)\": \(reason)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr {
                var storage = sockaddr_storage()
                let length = min(Int(entry.pointee.ai_addrlen), MemoryLayout<sockaddr_storage>.size)
                withUnsafeMutableBytes(of: &storage) { target in
                    target.copyMemory(from: UnsafeRawBufferPointer(start: raw, count: length))
                }
                if let address = SocketAddress(storage) {
                    addresses.append(address)
                }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw MsgTransRuntimeError(.invalidAddress, "host \"\(host)\" has no IPv4 or IPv6 address")
        }
        return addresses
    }

    private static func stripBrackets(_ host: String) -> String {
        if host.hasPrefix("[") && host.hasSuffix("]") && host.count >= 2 {
            return String(host.dropFirst().dropLast())
        }
        return host
    }

    private static func string(_ text: [CChar]) -> String {
        text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
