import Foundation

/// A thread that runs one long body (an executor's job loop), named for `top` and debuggers.
package enum DedicatedThread {
    /// Starts a thread named `name` (Linux keeps 15 bytes) that runs `body`.
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        // Foundation on Linux only forwards `name` to the OS thread once `start()` has recorded the
        // thread's handle, which can happen after the new thread is already running: wait for
        // `start()` to return first.
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            started.wait()
            Thread.current.name = name
            body()
        }
        thread.start()
        started.signal()
    }
}
