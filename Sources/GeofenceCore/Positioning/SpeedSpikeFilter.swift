import Foundation

/// gpsd computes a speed from successive positions when a sentence carries none, and right after a fix
/// jumps those speeds spike (16 m/s on a parked garmin-10x, 93 m/s in other logs). The receiver's own
/// speed comes with its course, so a speed without a course is the suspect kind.
///
/// Rule: a speed is dropped (reported unknown) when it exceeds `maximumSpeed`, or when it comes without
/// a course and differs from the last kept speed by more than `maximumAcceleration` times the time
/// between them (checked only across gaps up to `maximumGap`).
public struct SpeedSpikeFilter: Sendable {
    public var maximumSpeed: Double
    public var maximumAcceleration: Double
    public var maximumGap: Double
    private var lastSpeed: Double?
    private var lastTime: Date?

    public init(maximumSpeed: Double = 100, maximumAcceleration: Double = 10, maximumGap: Double = 5) {
        self.maximumSpeed = maximumSpeed
        self.maximumAcceleration = maximumAcceleration
        self.maximumGap = maximumGap
    }

    /// The speed to report for a fix at `time`, or nil when unknown or a spike.
    public mutating func filter(speed: Double?, hasCourse: Bool, at time: Date) -> Double? {
        guard let speed, speed.isFinite, speed >= 0 else { return nil }
        if speed > maximumSpeed { return nil }
        if !hasCourse, let lastSpeed, let lastTime {
            let dt = time.timeIntervalSince(lastTime)
            if dt > 0, dt <= maximumGap, abs(speed - lastSpeed) > maximumAcceleration * dt { return nil }
        }
        lastSpeed = speed
        lastTime = time
        return speed
    }
}
