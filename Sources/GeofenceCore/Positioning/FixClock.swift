import Foundation

/// The agent's timeline for one receiver. GPS time is data, not truth: fixes can lack it, receivers jump
/// back (bt451's concatenated sessions, humminbird), and old firmware reports a time 1024 weeks early.
/// Ordering, dwell and event times need a time that only moves forward, so:
/// - a GPS time is corrected by whole 1024-week eras when it is about that far behind a sane wall clock;
/// - the timeline is GPS time plus an offset; when GPS time would move the timeline back (or not forward),
///   the offset is re-anchored so the timeline advances by the monotonic time elapsed (at least 1 ms);
/// - GPS time is the truth once it is present: the wall clock never places a fix while GPS time may come.
///   A fix without GPS time before the first one (a receiver that sends GGA before RMC has no date in its
///   first epoch) is held back, not placed: placed at the wall clock, a day ahead of an old capture's GPS
///   time or a minute behind a vehicle whose clock drifts, it would make every later GPS time look like a
///   step back, and the whole run would follow the wall clock. Only a receiver that gives no GPS time for
///   `anchorWait` is placed by the wall clock (or after the floor, when the wall clock is unset or behind);
/// - after that, a fix without GPS time is placed at the last timeline time plus the monotonic time elapsed.
public struct FixClock: Sendable {
    public enum Source: String, Sendable, Codable {
        /// GPS time, corrected for week rollover only.
        case gps
        /// GPS time shifted because it went back.
        case adjusted
        /// No GPS time: the receive time.
        case receiver
    }

    public static let gpsEra: TimeInterval = 1024 * 7 * 86_400
    /// Wall clocks before this are taken as unset (a vehicle computer without RTC at boot).
    public static let saneWallClock = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01

    /// How long fixes without GPS time are held back, waiting for the first GPS time, before the wall clock
    /// anchors the timeline.
    public static let anchorWait: TimeInterval = 10

    private var offset: TimeInterval = 0
    private var last: Date?
    /// When the last placed fix was received; nil before the first.
    private var lastReceived: UInt64?
    /// Whether the timeline has its anchor: a GPS time, or the wall clock after `anchorWait` without one.
    private var anchored = false
    /// When the first fix held back for want of GPS time was received.
    private var heldSince: UInt64?

    public init() {}

    /// A timeline that resumes after `floor`: the last time a previous run of the agent gave a fix (the
    /// store keeps it). A GPS time at or before it is moved on, as a jump back would be; without this, a
    /// timeline that had been moved on (a receiver that jumped back, a drive dated before the clock) would
    /// start again behind the restored monitors after a crash, and they would refuse every fix as out of
    /// order until the GPS time caught up.
    public init(resumingAfter floor: Date?) {
        last = floor
    }

    /// The GPS time moved forward by whole eras when it sits at least ~1024 weeks behind the wall clock.
    public static func correctingRollover(_ gps: Date, wallClock: Date) -> Date {
        guard wallClock >= saneWallClock else { return gps }
        var t = gps
        while t.addingTimeInterval(gpsEra - 7 * 86_400) < wallClock { t = t.addingTimeInterval(gpsEra) }
        return t
    }

    /// The timeline time for a fix received at `received` (monotonic ns); nil for a fix held back: it has
    /// no GPS time, and none has come yet (see `anchorWait`).
    public mutating func place(gpsTime: Date?, received: UInt64, wallClock: Date) -> (Date, Source)? {
        // Before the first fix there is no elapsed time to go by (a resumed timeline has only its floor).
        let elapsed = lastReceived.map { max(0.001, received >= $0 ? Double(received - $0) / 1e9 : 0) } ?? 0.001
        guard let gpsTime else {
            let t: Date
            if anchored, let last {
                t = last.addingTimeInterval(elapsed)
            } else {
                let since = heldSince ?? received
                heldSince = since
                guard received >= since, Double(received - since) / 1e9 >= Self.anchorWait else { return nil }
                // No GPS time from this receiver: the wall clock, unless it is unset or behind the floor.
                let afterFloor = last.map { $0.addingTimeInterval(elapsed) }
                t = afterFloor.map { wallClock > $0 && wallClock >= Self.saneWallClock ? wallClock : $0 } ?? wallClock
                anchored = true
            }
            last = t
            lastReceived = received
            return (t, .receiver)
        }
        anchored = true
        lastReceived = received
        let corrected = Self.correctingRollover(gpsTime, wallClock: wallClock)
        var t = corrected.addingTimeInterval(offset)
        var source: Source = offset == 0 ? .gps : .adjusted
        if let last, t <= last {
            let placed = last.addingTimeInterval(elapsed)
            offset = placed.timeIntervalSince(corrected)
            t = placed
            source = .adjusted
        }
        last = t
        return (t, source)
    }
}
