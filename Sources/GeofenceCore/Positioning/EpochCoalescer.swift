import Foundation

/// gpsd sends a TPV for every sentence that touches the fix, so one receiver epoch arrives as several
/// TPVs (bundg_zeus_9: 2,484 TPVs for 148 epochs). Each repeats gpsd's merged state, the early ones with
/// stale positions and gpsd-computed speeds. The last TPV of an epoch is the complete one.
///
/// Rule: per device, reports with the same GPS time (or a run of reports with none) form one epoch, and
/// the last one stands for it. An epoch closes when the device sends a report with another time, or when
/// it has been quiet for `quietPeriod`, or when the stream ends.
///
/// Early close: waiting for the next epoch or for quiet costs up to a whole epoch of latency. Most
/// receivers send the same sentences every epoch, so when the device's last `learnedEpochs` epochs
/// each had exactly N TPVs, an epoch with a GPS time closes at its N-th TPV. A late TPV of an epoch already
/// closed is dropped; it also breaks the run, so the next epochs close the slow way until the count is
/// steady again.
public struct EpochCoalescer: Sendable {
    public var quietPeriodNanoseconds: UInt64
    /// Whether epochs may close at their learned report count.
    public var closesEarly: Bool
    /// How many consecutive epochs with one report count make that count trusted.
    public static let learnedEpochs = 3

    private struct DeviceEpoch {
        var last: ReceiverReport
        var count = 1
        /// Handed on already (early, or after quiet); later reports with its time are late.
        var delivered = false
        /// Report counts of the device's last finished epochs, newest last.
        var history: [Int] = []

        var learnedCount: Int? {
            guard history.count == EpochCoalescer.learnedEpochs, let first = history.first,
                  history.allSatisfy({ $0 == first }) else { return nil }
            return first
        }
    }

    private var devices: [String: DeviceEpoch] = [:]

    public init(quietPeriod: Double = 0.05, closesEarly: Bool = true) {
        quietPeriodNanoseconds = UInt64(max(0, quietPeriod) * 1e9)
        self.closesEarly = closesEarly
    }

    /// Adds a report and returns the epochs it closed, oldest first: the previous epoch when this report
    /// starts a new one, and this report's own epoch when it reached the learned count.
    public mutating func add(_ report: ReceiverReport) -> [ReceiverReport] {
        let key = report.device ?? ""
        guard var epoch = devices[key] else {
            devices[key] = DeviceEpoch(last: report)
            return []
        }
        // A run without time that was already delivered ended with the quiet: this report starts anew.
        let sameEpoch = epoch.last.time == report.time && !(report.time == nil && epoch.delivered)
        var closed: [ReceiverReport] = []
        if sameEpoch {
            epoch.count += 1
            if epoch.delivered {
                // Late: the epoch was handed on; its count now says the learned count was wrong.
                devices[key] = epoch
                return []
            }
            epoch.last = report
        } else {
            if !epoch.delivered { closed.append(epoch.last) }
            epoch.history.append(epoch.count)
            if epoch.history.count > Self.learnedEpochs { epoch.history.removeFirst() }
            epoch.last = report
            epoch.count = 1
            epoch.delivered = false
        }
        if closesEarly, report.time != nil, let learned = epoch.learnedCount, epoch.count == learned {
            epoch.delivered = true
            closed.append(report)
        }
        devices[key] = epoch
        return closed
    }

    /// Epochs quiet for at least the quiet period at `now` (monotonic ns), oldest first.
    public mutating func closeQuiet(now: UInt64) -> [ReceiverReport] {
        // Called after every message: return at once, without allocating, when nothing is due.
        guard let deadline = nextDeadline, deadline <= now else { return [] }
        var due: [ReceiverReport] = []
        for (key, epoch) in devices where !epoch.delivered {
            let received = epoch.last.receivedAtNanoseconds
            guard now >= received, now &- received >= quietPeriodNanoseconds else { continue }
            devices[key]!.delivered = true
            due.append(epoch.last)
        }
        return due.sorted { $0.receivedAtNanoseconds < $1.receivedAtNanoseconds }
    }

    /// Every open epoch, oldest first: the connection ended, and what was learned goes with it.
    public mutating func closeAll() -> [ReceiverReport] {
        defer { devices.removeAll() }
        return devices.values.filter { !$0.delivered }.map(\.last).sorted { $0.receivedAtNanoseconds < $1.receivedAtNanoseconds }
    }

    /// Closes one device's epoch: it was removed.
    public mutating func close(device: String?) -> ReceiverReport? {
        guard let epoch = devices.removeValue(forKey: device ?? ""), !epoch.delivered else { return nil }
        return epoch.last
    }

    /// When the oldest open epoch falls quiet, for a reader choosing how long to wait.
    public var nextDeadline: UInt64? {
        var earliest: UInt64?
        for epoch in devices.values where !epoch.delivered {
            let due = epoch.last.receivedAtNanoseconds &+ quietPeriodNanoseconds
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }
}
