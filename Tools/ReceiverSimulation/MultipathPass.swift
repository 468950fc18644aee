import Foundation
import GeofenceCore

/// A vehicle that drives along a fence's boundary at a steady depth (inside or outside), while a multipath
/// episode pulls its position across the boundary and back. The truth never crosses, so every transition
/// is false; a clean run of the same drive gives none.
public struct MultipathPass: Sendable {
    public struct Result: Sendable {
        /// Enter, exit and crossed events: all false.
        public var falseTransitions: Int
        public var fixes: Int
        /// Fixes judged `excursion` during the episode (and the fix after it), and outside it.
        public var flaggedInEpisode: Int
        public var flaggedOutside: Int
        public var fixesOutside: Int
        /// Metres driven.
        public var distance: Double
    }

    public var shape: Crossing.Shape
    /// m/s.
    public var speed: Double
    /// How far from the boundary the vehicle truly is, metres; positive inside.
    public var depth: Double
    /// Seconds after the start the episode begins, its length, and its pull (metres, across the boundary).
    public var episodeStart: Double
    public var episodeDuration: Double
    public var pull: Double
    /// A slow drift (ramps of a third of the duration each) instead of a city's 3 s ramps.
    public var drift = false
    /// Seconds driven in all; by default a minute past the episode's end.
    public var duration: Double

    public init(
        shape: Crossing.Shape, speed: Double, depth: Double, episodeStart: Double = 120, episodeDuration: Double,
        pull: Double, drift: Bool = false, duration: Double? = nil
    ) {
        self.shape = shape
        self.speed = speed
        self.depth = depth
        self.episodeStart = episodeStart
        self.episodeDuration = episodeDuration
        self.pull = pull
        self.drift = drift
        // A minute after the episode: a transition it caused late would show.
        self.duration = duration ?? episodeStart + episodeDuration + 60
    }

    /// The fence is `Crossing`'s: its boundary runs north-south through the crossing point, inside to
    /// the east.
    public var crossing: Crossing { Crossing(shape: shape, speed: speed, angle: 90) }

    /// Where the vehicle is after `s` metres along the boundary, and which way it heads (unit east, north).
    public func position(along s: Double) -> (Coordinate, east: Double, north: Double) {
        let origin = crossing.crossingPoint
        switch shape {
        case .circle:
            // A circle of 20 km: drive on the concentric circle `depth` inside it, placed exactly on the
            // ellipsoid (a tangent plane 20 km wide would put the truth metres off its depth).
            let centre = Offsets.moved(origin, east: 20_000, north: 0)
            let radius = 20_000 - depth
            let bearing = 270 + s / radius * 180 / .pi
            func point(_ bearing: Double) -> Coordinate {
                var p = Offsets.moved(centre, metres: radius, bearing: bearing)
                for _ in 0..<3 {
                    p = Offsets.moved(centre, metres: radius * radius / Geodesic.distance(centre, p), bearing: bearing)
                }
                return p
            }
            // The heading in the vehicle's own east and north (meridians converge over 20 km: the bearing
            // from the centre plus 90° would be a quarter of a degree off, a Doppler no receiver reports).
            let step = 0.5 / radius * 180 / .pi
            let (a, b) = (point(bearing - step), point(bearing + step))
            let p = point(bearing)
            let east = (b.longitude - a.longitude) * .pi / 180 * Offsets.metresPerRadianOfLongitude(at: p.latitude)
            let north = (b.latitude - a.latitude) * .pi / 180 * WGS84.meridionalRadius(latitude: p.latitude)
            let length = (east * east + north * north).squareRoot()
            return (p, east / length, north / length)
        case .polygon, .corridor:
            return (Offsets.moved(origin, east: depth, north: s), 0, 1)
        }
    }

    public func run(
        _ profile: SimulatedReceiver.Profile, seed: UInt64, configuration: MonitorConfiguration = MonitorConfiguration()
    ) -> Result {
        var monitors = MonitorSet(configuration: configuration)
        monitors.add(crossing.condition, identifier: "fence", monitor: "pass")
        var receiver = SimulatedReceiver(profile, seed: seed)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        let middle = position(along: speed * (episodeStart + episodeDuration / 2) - speed * duration / 2)
        // Across the boundary: inwards (east at the crossing point) from outside, outwards from inside.
        let inwards = atan2(middle.north, -middle.east) * 180 / .pi
        let bearing = depth < 0 ? inwards : inwards + 180
        let episodeTime = start.addingTimeInterval(episodeStart)
        receiver.episodes = [
            drift
                ? .drift(
                    start: episodeTime, ramp: episodeDuration / 3, hold: episodeDuration / 3, offset: pull,
                    bearing: bearing)
                : .urban(start: episodeTime, duration: episodeDuration, offset: pull, bearing: bearing)
        ]
        let episode = receiver.episodes[0]
        var result = Result(
            falseTransitions: 0, fixes: 0, flaggedInEpisode: 0, flaggedOutside: 0, fixesOutside: 0,
            distance: speed * duration)
        for k in 0...Int(duration) {
            let time = start.addingTimeInterval(Double(k))
            let (truth, east, north) = position(along: speed * Double(k) - speed * duration / 2)
            let fix = receiver.fix(truth: truth, velocity: (speed * east, speed * north), at: time)
            let step = monitors.process(fix)
            result.fixes += 1
            // The fix after the episode is held back by design: it counts with the episode.
            let inEpisode = episode.contains(time) || episode.contains(time.addingTimeInterval(-1))
            if !inEpisode { result.fixesOutside += 1 }
            if step.location.motionVerdict == .excursion {
                if inEpisode { result.flaggedInEpisode += 1 } else { result.flaggedOutside += 1 }
            }
            result.falseTransitions +=
                step.steps.flatMap(\.events).filter {
                    $0.kind == .enter || $0.kind == .exit || $0.kind == .crossed
                }.count
        }
        return result
    }
}
