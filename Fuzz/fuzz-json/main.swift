// Placeholder so that `PULSEGATE_FUZZ=1` package builds resolve (Package.swift declares this
// target). The PulseJSON work replaces it with the real fuzz-json entry point.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    0
}
