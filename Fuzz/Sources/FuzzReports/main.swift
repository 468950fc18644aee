import FuzzChecks

/// libFuzzer's entry point (see FuzzCheck.fuzz).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt { FuzzCheck.reports.fuzz(start, count) }
