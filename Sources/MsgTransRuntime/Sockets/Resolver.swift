import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

/// Host name resolution that never blocks the cooperative thread pool.
enum Resolver {
    /// Numeric addresses are parsed in place; names are resolved with `getaddrinfo` on a
    /// short-lived thread of their own.
    static func resolve(host: String, port: UInt16) async throws(MsgTransRuntimeError) -> [SocketAddress] {
        if let numeric = SocketAddress(numericHost: host, port: port) {
            return [numeric]
        }
        let promise = OneShot<Result<[SocketAddress], MsgTransRuntimeError>>()
        let result = await withCheckedContinuation { continuation in
            guard promise.install(continuation) else { return }
            let result = DetachedThread.start {
                do throws(MsgTransRuntimeError) {
                    promise.complete(.success(try SocketAddress.resolve(host: host, port: port)))
                } catch {
                    promise.complete(.failure(error))
                }
            }
            if result != 0 {
                promise.complete(.failure(MsgTransRuntimeError(.systemCallFailed, "cannot start a resolver thread")))
            }
        }
        return try result.get()
    }
}

/// Runs a closure on a new detached thread.
enum DetachedThread {
    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    /// Returns 0, or `pthread_create`'s error number when the thread could not be created.
    static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Box(body))
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { context in
                let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
                box.body()
                return nil
            }, box.toOpaque())
        guard result == 0 else {
            box.release()
            return result
        }
        pthread_detach(thread)
        return 0
    }
}
