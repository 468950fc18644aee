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
/// each had exactly N reports, an epoch with a GPS time closes at its N-th report. Reports are the TPVs and
/// the GSTs with the epoch's time: a receiver that sends GST after its last position sentence (many do)
/// closes at the GST, so the epoch's location carries the receiver's own 1-sigma accuracy instead of one
/// derived from DOP. A late report of an epoch already closed is dropped; it also breaks the run, so the
/// next epochs close the slow way until the count is steady again.
public struct EpochCoalescer: Sendable {
    public var quietPeriodNanoseconds: UInt64
    /// Whether epochs may close at their learned report count.
    public var closesEarly: Bool
    /// How many consecutive epochs with one report count make that count trusted.
    public static let learnedEpochs = 3

    private struct DeviceEpoch {
        /// The epoch's GPS time (nil for a run of TPVs without one).
        var time: Date?
        /// Its latest TPV; nil while only its GST has arrived.
        var last: ReceiverReport?
        /// When its latest report arrived, monotonic nanoseconds.
        var receivedAt: UInt64
        var count = 1
        /// Handed on already (early, or after quiet); later reports with its time are late.
        var delivered = false
        /// Report counts of the device's last finished epochs, newest last.
        var history: [Int] = []

        var learnedCount: Int? {
            guard history.count == EpochCoalescer.learnedEpochs, let first = history.first,
                history.allSatisfy({ $0 == first })
            else { return nil }
            return first
        }

        /// Ends this epoch and starts the next one with a report of time `time`: returns the TPV to hand on.
        mutating func startNext(time: Date?, last: ReceiverReport?, receivedAt: UInt64) -> ReceiverReport? {
            let closed = delivered ? nil : self.last
            history.append(count)
            if history.count > EpochCoalescer.learnedEpochs { history.removeFirst() }
            self.time = time
            self.last = last
            self.receivedAt = receivedAt
            count = 1
            delivered = false
            return closed
        }
    }

    private var devices: [String: DeviceEpoch] = [:]

    public init(quietPeriod: Double = 0.05, closesEarly: Bool = true) {
        quietPeriodNanoseconds = UInt64(max(0, quietPeriod) * 1e9)
        self.closesEarly = closesEarly
    }

    /// Adds a TPV and returns the epochs it closed, oldest first: the previous epoch when this report
    /// starts a new one, and this report's own epoch when it reached the learned count.
    public mutating func add(_ report: ReceiverReport) -> [ReceiverReport] {
        count(device: report.device, time: report.time, position: report, receivedAt: report.receivedAtNanoseconds)
    }

    /// Counts a GST as a report of the epoch with its time (the caller hands the noise itself to the
    /// `LocationAssembler` first), and returns the epochs that closed. A GST without a time, or beside
    /// TPVs without one, says nothing about epochs and changes nothing.
    public mutating func add(noise: PseudorangeNoise, receivedAtNanoseconds: UInt64) -> [ReceiverReport] {
        guard let time = noise.time, devices[noise.device ?? ""].map({ $0.time != nil }) ?? true else { return [] }
        return count(device: noise.device, time: time, position: nil, receivedAt: receivedAtNanoseconds)
    }

    /// One report of a device's epoch `time`, with its TPV when it is one.
    private mutating func count(device: String?, time: Date?, position: ReceiverReport?, receivedAt: UInt64)
        -> [ReceiverReport]
    {
        let key = device ?? ""
        guard var epoch = devices[key] else {
            devices[key] = DeviceEpoch(time: time, last: position, receivedAt: receivedAt)
            return []
        }
        // A run without time that was already delivered ended with the quiet: this report starts anew.
        let sameEpoch = epoch.time == time && !(time == nil && epoch.delivered)
        var closed: [ReceiverReport] = []
        if sameEpoch {
            epoch.count += 1
            if epoch.delivered {
                // Late: the epoch was handed on; its count now says the learned count was wrong.
                devices[key] = epoch
                return []
            }
            if let position { epoch.last = position }
            epoch.receivedAt = receivedAt
        } else if let previous = epoch.startNext(time: time, last: position, receivedAt: receivedAt) {
            closed.append(previous)
        }
        closeIfComplete(&epoch, &closed)
        devices[key] = epoch
        return closed
    }

    /// Hands on an epoch with a time and a position report once it reached its learned count.
    private func closeIfComplete(_ epoch: inout DeviceEpoch, _ closed: inout [ReceiverReport]) {
        guard closesEarly, epoch.time != nil, let learned = epoch.learnedCount, epoch.count == learned,
            let last = epoch.last
        else { return }
        epoch.delivered = true
        closed.append(last)
    }

    /// Epochs quiet for at least the quiet period at `now` (monotonic ns), oldest first.
    public mutating func closeQuiet(now: UInt64) -> [ReceiverReport] {
        // Called after every message: return at once, without allocating, when nothing is due.
        guard let deadline = nextDeadline, deadline <= now else { return [] }
        var due: [ReceiverReport] = []
        for (key, epoch) in devices where !epoch.delivered {
            guard now >= epoch.receivedAt, now &- epoch.receivedAt >= quietPeriodNanoseconds else { continue }
            devices[key]!.delivered = true
            if let last = epoch.last { due.append(last) }
        }
        return due.sorted { $0.receivedAtNanoseconds < $1.receivedAtNanoseconds }
    }

    /// Every open epoch, oldest first: the connection ended, and what was learned goes with it.
    public mutating func closeAll() -> [ReceiverReport] {
        defer { devices.removeAll() }
        return devices.values.filter { !$0.delivered }.compactMap(\.last).sorted {
            $0.receivedAtNanoseconds < $1.receivedAtNanoseconds
        }
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
            let due = epoch.receivedAt &+ quietPeriodNanoseconds
            if earliest.map({ due < $0 }) ?? true { earliest = due }
        }
        return earliest
    }
}
