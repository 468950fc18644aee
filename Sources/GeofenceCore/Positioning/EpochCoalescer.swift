import Foundation

/// gpsd sends a TPV for every sentence that touches the fix, so one receiver epoch arrives as several
/// TPVs (bundg_zeus_9: 2,484 TPVs for 148 epochs). Each repeats gpsd's merged state, the early ones with
/// stale positions and gpsd-computed speeds. The last TPV of an epoch is the complete one.
///
/// Rule: per device, reports with the same GPS time (or a run of reports with none) form one epoch, and
/// the last one stands for it. An epoch closes when the device sends a report with another time, or when
/// it has been quiet for `quietPeriod`, or when the stream ends.
public struct EpochCoalescer: Sendable {
    public var quietPeriodNanoseconds: UInt64
    private var pending: [String: ReceiverReport] = [:]

    public init(quietPeriod: Double = 0.05) {
        quietPeriodNanoseconds = UInt64(max(0, quietPeriod) * 1e9)
    }

    /// Adds a report and returns the epoch it closed, if any.
    public mutating func add(_ report: ReceiverReport) -> ReceiverReport? {
        let key = report.device ?? ""
        let previous = pending[key]
        pending[key] = report
        guard let previous, previous.time != report.time else { return nil }
        return previous
    }

    /// Epochs quiet for at least the quiet period at `now` (monotonic ns), oldest first.
    public mutating func closeQuiet(now: UInt64) -> [ReceiverReport] {
        // Called after every message: return at once, without allocating, when nothing is due.
        guard let deadline = nextDeadline, deadline <= now else { return [] }
        let due = pending.filter { now &- $0.value.receivedAtNanoseconds >= quietPeriodNanoseconds && now >= $0.value.receivedAtNanoseconds }
        for key in due.keys { pending[key] = nil }
        return due.values.sorted { $0.receivedAtNanoseconds < $1.receivedAtNanoseconds }
    }

    /// Every open epoch, oldest first: the connection ended.
    public mutating func closeAll() -> [ReceiverReport] {
        defer { pending.removeAll() }
        return pending.values.sorted { $0.receivedAtNanoseconds < $1.receivedAtNanoseconds }
    }

    /// Closes one device's epoch: it was removed.
    public mutating func close(device: String?) -> ReceiverReport? {
        pending.removeValue(forKey: device ?? "")
    }

    /// When the oldest open epoch falls quiet, for a reader choosing how long to wait.
    public var nextDeadline: UInt64? {
        var earliest: UInt64?
        for report in pending.values {
            let due = report.receivedAtNanoseconds &+ quietPeriodNanoseconds
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }
}
