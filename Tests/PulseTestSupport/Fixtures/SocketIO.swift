import Glibc

/// Blocking socket calls the hand-written test peers share (msgtrans frame sockets, scripted HTTP
/// servers, relays). Run them off the cooperative pool (`onThread`, or a thread of the peer's own).

/// Sets a receive timeout (so a read that never gets an answer fails instead of hanging the
/// suite) and disables Nagle's algorithm (each write leaves at once).
package func configureTestSocket(_ fd: Int32, receiveTimeoutSeconds: Int = 10) {
    var timeout = timeval(tv_sec: receiveTimeoutSeconds, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
}

/// Writes every byte (retrying short writes and interrupted calls); `false` when the peer is gone.
@discardableResult
package func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> Bool {
    let bytes = Array(bytes)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes {
            send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if written < 0 && errno == EINTR { continue }
        if written <= 0 { return false }
        offset += written
    }
    return true
}

/// Reads what has arrived (waiting for at least one byte, up to the receive timeout); `nil` at the
/// end of the stream, on a reset, an error or a timeout (`errno` tells which).
package func readSome(_ fd: Int32, maximum: Int = 64 * 1024) -> [UInt8]? {
    var buffer = [UInt8](repeating: 0, count: maximum)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return nil }
        return Array(buffer[0..<count])
    }
}

/// Accepts connections on `listener`, handing each to `handle`, until accepting fails (the listener
/// was shut down) or `handle` returns `false` (it then owns, and closes, that descriptor).
/// Interrupted and aborted accepts are retried. The caller closes the listener afterwards.
package func acceptConnections(on listener: Int32, _ handle: (Int32) -> Bool) {
    while true {
        let client = accept(listener, nil, nil)
        if client < 0 {
            if errno == EINTR || errno == ECONNABORTED { continue }
            return
        }
        guard handle(client) else { return }
    }
}
