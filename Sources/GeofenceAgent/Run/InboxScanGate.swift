#if canImport(Glibc)
    import Glibc
#endif

/// Whether the CLI's inbox may hold something new, from the directory's modification time: the round
/// every second then costs one `stat`, not a listing (nor, with no inbox at all, an error made and thrown).
/// A request arrives by a rename, which moves the directory's time; a time too recent to trust (a second
/// change within the same clock tick leaves it as it was) is never taken as settled.
struct InboxScanGate {
    /// The directory's time at the last listing that found nothing to do, once it was at least
    /// `settleNanoseconds` old.
    private var settled: timespec?
    static let settleNanoseconds: Int64 = 1_000_000_000

    /// The directory's time when a listing is due now; nil when there is no inbox or nothing changed.
    mutating func due(_ directory: String) -> timespec? {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            settled = nil
            return nil
        }
        if let settled, settled.tv_sec == info.st_mtim.tv_sec, settled.tv_nsec == info.st_mtim.tv_nsec { return nil }
        return info.st_mtim
    }

    /// A listing made after `due` gave `time`: when it found nothing to do, the inbox is settled at that
    /// time unless the time is too recent to trust.
    mutating func listed(at time: timespec, foundWork: Bool) {
        settled = nil
        guard !foundWork else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let age = (Int64(now.tv_sec) - Int64(time.tv_sec)) * 1_000_000_000 + Int64(now.tv_nsec) - Int64(time.tv_nsec)
        if age >= Self.settleNanoseconds { settled = time }
    }
}
