import Foundation
import GeofenceCore

/// Urban multipath as a receiver shows it: the position pulled aside in one direction, while the stated
/// accuracy stays what it was and the Doppler speed and course stay true (they come from carrier
/// frequencies, not ranges). The pull ramps up, holds, and ramps back.
public struct MultipathEpisode: Sendable, Equatable {
    /// When the ramp up begins.
    public var start: Date
    /// Seconds of each ramp.
    public var ramp: Double
    /// Seconds at the full pull.
    public var hold: Double
    /// The full pull, metres.
    public var offset: Double
    /// Degrees clockwise from north: the direction of the pull.
    public var bearing: Double

    public init(start: Date, ramp: Double, hold: Double, offset: Double, bearing: Double) {
        self.start = start
        self.ramp = ramp
        self.hold = hold
        self.offset = offset
        self.bearing = bearing
    }

    /// An episode as measured in a city: `duration` seconds in all, ramps of 3 s (a third each when
    /// shorter).
    public static func urban(start: Date, duration: Double, offset: Double, bearing: Double) -> MultipathEpisode {
        let ramp = min(3, duration / 3)
        return MultipathEpisode(start: start, ramp: ramp, hold: duration - 2 * ramp, offset: offset, bearing: bearing)
    }

    /// The bias-only kind: a slow drift of `offset` metres over `ramp` seconds each way, held in between.
    public static func drift(start: Date, ramp: Double, hold: Double, offset: Double, bearing: Double)
        -> MultipathEpisode
    {
        MultipathEpisode(start: start, ramp: ramp, hold: hold, offset: offset, bearing: bearing)
    }

    public var duration: Double { 2 * ramp + hold }
    public var end: Date { start.addingTimeInterval(duration) }

    /// Whether `time` falls within the episode.
    public func contains(_ time: Date) -> Bool { time > start && time < end }

    /// The pull at `time`, metres east and north; zero outside the episode.
    public func displacement(at time: Date) -> (east: Double, north: Double) {
        let t = time.timeIntervalSince(start)
        guard t > 0, t < duration else { return (0, 0) }
        let share = ramp > 0 ? min(1, min(t, duration - t) / ramp) : 1
        let b = bearing * .pi / 180
        return (share * offset * sin(b), share * offset * cos(b))
    }
}
