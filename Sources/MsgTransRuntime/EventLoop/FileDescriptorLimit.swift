#if canImport(Glibc)
    import Glibc
#endif

/// The process's open-file limit, raised once from the soft to the hard limit.
enum FileDescriptorLimit {
    /// The soft `RLIMIT_NOFILE` after trying to raise it to the hard limit (evaluated once).
    static let raisedSoftLimit: Int = {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return -1 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 {
                limit = raised
            }
        }
        return Int(clamping: limit.rlim_cur)
    }()
}
