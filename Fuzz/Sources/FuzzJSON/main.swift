import FuzzChecks

/// libFuzzer's entry point: a problem the check finds stops the fuzzer, which keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let problems = FuzzCheck.json.problems(Array(UnsafeRawBufferPointer(start: start, count: count)))
    if !problems.isEmpty { fatalError(problems.joined(separator: "; ")) }
    return 0
}
