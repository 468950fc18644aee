import Foundation

/// A position report, shaped like Core Location's `CLLocation`.
///
/// Accuracies follow Core Location's meaning: about one standard deviation, in metres; a negative value
/// means the quantity is unknown.
public struct Location: Sendable, Equatable, Codable {
    public enum FixMode: Int, Sendable, Codable {
        case noFix = 1
        case twoD = 2
        case threeD = 3
    }

    public var coordinate: Coordinate
    /// Height above the WGS84 ellipsoid, metres.
    public var altitudeHAE: Double?
    /// Height above mean sea level, metres.
    public var altitudeMSL: Double?
    public var horizontalAccuracy: Double
    public var verticalAccuracy: Double
    /// Metres per second; negative when unknown.
    public var speed: Double
    public var speedAccuracy: Double
    /// Degrees clockwise from true north; negative when unknown.
    public var course: Double
    public var courseAccuracy: Double
    /// Vertical speed, metres per second.
    public var climb: Double?
    /// The time of the fix on the agent's timeline: the receiver's time when it is sane, carried forward
    /// when the receiver reports none or jumps back. Ordering, dwell and events use this.
    public var timestamp: Date
    /// The GPS time exactly as gpsd reported it, kept as data even when wrong; nil when the fix had none.
    public var gpsTime: Date?
    /// When the agent received it, on a monotonic clock (nanoseconds), for ages and latency.
    public var receivedAtNanoseconds: UInt64?
    public var mode: FixMode
    public var satellitesUsed: Int?
    /// The receiver's device, by its path as gpsd names it (a number, so that a location copies as plain bytes).
    public var deviceName: DeviceName?
    /// What the motion-consistency check made of the fix, once a `MonitorSet` has checked it; nil before, or
    /// when the check is off or could not use the fix.
    public var motionVerdict: MotionVerdict?

    /// The receiver's device path, as gpsd names it.
    public var device: String? {
        get { deviceName?.path }
        set { deviceName = newValue.map(DeviceName.init) }
    }

    private enum CodingKeys: String, CodingKey {
        case coordinate, altitudeHAE, altitudeMSL, horizontalAccuracy, verticalAccuracy, speed, speedAccuracy
        case course, courseAccuracy, climb, timestamp, gpsTime, receivedAtNanoseconds, mode, satellitesUsed
        case deviceName = "device"
        case motionVerdict
    }

    public init(
        coordinate: Coordinate, altitudeHAE: Double? = nil, altitudeMSL: Double? = nil,
        horizontalAccuracy: Double, verticalAccuracy: Double = -1,
        speed: Double = -1, speedAccuracy: Double = -1, course: Double = -1, courseAccuracy: Double = -1,
        climb: Double? = nil, timestamp: Date, gpsTime: Date? = nil, receivedAtNanoseconds: UInt64? = nil,
        mode: FixMode = .threeD, satellitesUsed: Int? = nil, device: String? = nil
    ) {
        self.coordinate = coordinate
        self.altitudeHAE = altitudeHAE
        self.altitudeMSL = altitudeMSL
        self.horizontalAccuracy = horizontalAccuracy
        self.verticalAccuracy = verticalAccuracy
        self.speed = speed
        self.speedAccuracy = speedAccuracy
        self.course = course
        self.courseAccuracy = courseAccuracy
        self.climb = climb
        self.timestamp = timestamp
        self.gpsTime = gpsTime
        self.receivedAtNanoseconds = receivedAtNanoseconds
        self.mode = mode
        self.satellitesUsed = satellitesUsed
        self.deviceName = device.map(DeviceName.init)
    }
}
