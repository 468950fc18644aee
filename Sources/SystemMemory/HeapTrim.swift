#if canImport(Glibc)
    import Glibc
#endif

/// glibc keeps memory freed by a burst of small allocations for reuse; `malloc_trim` gives it back to
/// the system. Looked up at run time (it is not in Swift's Glibc module), and skipped where it is absent.
package enum HeapTrim {
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let trim: Trim? = {
        #if canImport(Glibc)
            guard let symbol = dlsym(nil, "malloc_trim") else { return nil }  // nil: RTLD_DEFAULT
            return unsafeBitCast(symbol, to: Trim.self)
        #else
            return nil
        #endif
    }()

    package static func giveBackFreedMemory() {
        _ = trim?(0)
    }
}
