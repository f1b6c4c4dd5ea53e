import CLinuxEvents

#if canImport(Glibc)
    import Glibc
#endif

/// Thin wrappers around the socket system calls the runtime uses. Every socket is non-blocking
/// and close-on-exec.
enum Socket {
    /// A new non-blocking TCP socket of `family`.
    static func makeStream(family: Int32) throws(MsgTransRuntimeError) -> Int32 {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        let fd = socket(family, type, 0)
        guard fd >= 0 else { throw .system("socket", errno: errno) }
        return fd
    }

    static func setOption(_ fd: Int32, level: Int32, name: Int32, value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Disables Nagle's algorithm: frames are small and latency matters.
    static func setNoDelay(_ fd: Int32) {
        setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
    }

    /// A listening socket bound to `address` with `SO_REUSEADDR`.
    static func listen(on address: SocketAddress, backlog: Int) throws(MsgTransRuntimeError) -> Int32 {
        let fd = try makeStream(family: address.family)
        setOption(fd, level: SOL_SOCKET, name: SO_REUSEADDR, value: 1)
        let bound = address.withSockAddr { bind(fd, $0, $1) }
        guard bound == 0 else {
            let number = errno
            close(fd)
            throw .system("bind(\(address))", errno: number)
        }
        guard Glibc.listen(fd, Int32(clamping: backlog)) == 0 else {
            let number = errno
            close(fd)
            throw .system("listen(\(address))", errno: number)
        }
        return fd
    }

    static func localAddress(_ fd: Int32) -> SocketAddress? {
        address(of: fd, getsockname)
    }

    static func peerAddress(_ fd: Int32) -> SocketAddress? {
        address(of: fd, getpeername)
    }

    /// The address `query` (`getsockname` or `getpeername`) reports for `fd`, or `nil` when it fails.
    private static func address(
        of fd: Int32, _ query: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { query(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage) : nil
    }

    /// Accepts one connection; `nil` when none is pending. Throws the `errno` of other failures.
    static func accept(_ listener: Int32) -> Result<Int32?, SystemError> {
        while true {
            let fd = accept4(listener, nil, nil, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
            if fd >= 0 { return .success(fd) }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO:
                continue
            case EAGAIN, EWOULDBLOCK:
                return .success(nil)
            case let number:
                return .failure(SystemError(number: number))
            }
        }
    }

    /// The pending error of a socket (`SO_ERROR`), 0 if none.
    static func pendingError(_ fd: Int32) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
        return value
    }
}

/// An `errno` value as an error.
struct SystemError: Error {
    let number: Int32
}
