/// Whether a soak run passed: every geofence's transitions heard in the order the drive makes them (each
/// once, redeliveries removed), and the resident memory flat. Memory is judged on runs of 5 minutes or more
/// (in a shorter one the first hour is the start-up): the last hour of driving at most 10% over the first,
/// and the last tenth at most 10% over the first tenth.
public struct SoakVerdict: Equatable, Sendable {
    public var delivered: Bool
    public var memoryChecked: Bool
    public var memoryFlat: Bool
    /// The peaks the memory is judged on, MB (-1: no sample there).
    public var firstHourMegabytes = -1.0, lastHourMegabytes = -1.0
    public var firstTenthMegabytes = -1.0, lastTenthMegabytes = -1.0
    public var passed: Bool { delivered && (memoryFlat || !memoryChecked) }

    /// `expected` and `heard`: (geofence, event) in the order made and heard; `rss`: (seconds since the
    /// drive began, MB); `drivenIn`: the drive's seconds; `speed`: how many times faster than real time.
    public init(
        expected: [(identifier: String, event: String)], heard: [(identifier: String, event: String)],
        rss: [(at: Double, megabytes: Double)], drivenIn: Double, speed: Double
    ) {
        delivered = Self.sequences(heard) == Self.sequences(expected)
        let tenth = max(drivenIn / 10, 10)
        let hour = max(3600 / speed, 10)
        func peak(_ range: ClosedRange<Double>) -> Double {
            rss.filter { range.contains($0.at) }.map(\.megabytes).max() ?? -1
        }
        firstTenthMegabytes = peak(0...tenth)
        lastTenthMegabytes = peak((drivenIn - tenth)...Double.greatestFiniteMagnitude)
        firstHourMegabytes = peak(0...hour)
        lastHourMegabytes = peak((drivenIn - hour)...Double.greatestFiniteMagnitude)
        memoryChecked = drivenIn >= 300
        memoryFlat =
            firstHourMegabytes > 0 && lastHourMegabytes <= firstHourMegabytes * 1.10
            && lastTenthMegabytes <= firstTenthMegabytes * 1.10
    }

    /// Per geofence, its events in order.
    public static func sequences(_ list: [(identifier: String, event: String)]) -> [String: [String]] {
        Dictionary(grouping: list, by: \.identifier).mapValues { $0.map(\.event) }
    }
}
