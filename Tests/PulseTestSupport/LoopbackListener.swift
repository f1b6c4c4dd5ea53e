import Glibc

/// A TCP listening socket on `127.0.0.1` at a free port, for test servers that speak a protocol
/// over plain blocking sockets.
package struct LoopbackListener: Sendable {
    /// The listening descriptor (the caller accepts on it and closes it).
    package let descriptor: Int32
    /// The port the kernel chose.
    package let port: Int

    /// Binds and listens; `nil` (with `errno` set) when the kernel refuses.
    package init?(backlog: Int32 = 64) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ready = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard ready else {
            close(fd)
            return nil
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Connects a blocking TCP socket to a numeric address (`127.0.0.1`, `::1`) and `port`, after
/// `configure` has set its options; `nil` (with `errno` set) when that fails.
package func connectToLoopback(host: String = "127.0.0.1", port: Int, configure: (Int32) -> Void = { _ in }) -> Int32? {
    var hints = addrinfo()
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var found: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &found) == 0, let address = found?.pointee else {
        errno = EINVAL
        return nil
    }
    defer { freeaddrinfo(found) }
    let fd = socket(address.ai_family, address.ai_socktype, address.ai_protocol)
    guard fd >= 0 else { return nil }
    configure(fd)
    guard connect(fd, address.ai_addr, address.ai_addrlen) == 0 else {
        let code = errno
        close(fd)
        errno = code
        return nil
    }
    return fd
}
