// What the benchmarks read about their own process: resident memory and the open-file limit.

import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Resident memory of this process in bytes (`/proc/self/statm`), or -1 when it cannot be read.
package func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Raises the soft open-file limit to the hard one; returns the limit now in force (-1 if unknown).
package func raiseOpenFileLimit() -> Int {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return -1 }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
    _ = getrlimit(resource, &limit)
    return Int(clamping: limit.rlim_cur)
}

/// `bytes` as mebibytes with one decimal, for the reports.
package func mebibytes(_ bytes: Int) -> String {
    String(format: "%.1f MiB", Double(bytes) / 1_048_576)
}
