import Foundation
import GeofenceCore

/// A drive with known stops: legs driven straight, each accelerating at 2 m/s² to its cruising speed and
/// braking to a standstill at its end, then parked for a while (a traffic light, a delivery, the night),
/// turning between legs. The truth is known to the centimetre and the second, for trips and stops.
public struct StopAndGoDrive: Sendable {
    public struct Leg: Sendable {
        public var distance: Double
        public var cruise: Double
        /// Seconds parked after the leg.
        public var park: Double
        /// Degrees the vehicle turns while parked after the leg.
        public var turn: Double

        public init(distance: Double, cruise: Double, park: Double, turn: Double = 90) {
            self.distance = distance
            self.cruise = cruise
            self.park = park
            self.turn = turn
        }
    }

    /// Where and how the vehicle truly is at a second.
    public struct Sample: Sendable {
        public var time: Date
        public var coordinate: Coordinate
        public var velocity: (east: Double, north: Double)
    }

    public static let acceleration = 2.0
    public let origin: Coordinate
    public let start: Date
    /// Seconds parked before the first leg.
    public let firstPark: Double
    public let legs: [Leg]

    public init(
        legs: [Leg], firstPark: Double = 400, origin: Coordinate = Coordinate(latitude: 52.37, longitude: 4.89),
        start: Date = Date(timeIntervalSince1970: 1_767_225_600)
    ) {
        self.legs = legs
        self.firstPark = firstPark
        self.origin = origin
        self.start = start
    }

    /// Seconds a leg takes, and its top speed (a short leg never reaches its cruise).
    static func timing(_ leg: Leg) -> (duration: Double, top: Double) {
        let a = acceleration
        let top = min(leg.cruise, (a * leg.distance).squareRoot())
        let ramps = top / a
        return (2 * ramps + (leg.distance - top * top / a) / top, top)
    }

    /// How far along a leg the vehicle is `t` seconds into it, and how fast it goes.
    static func along(_ leg: Leg, _ t: Double) -> (s: Double, v: Double) {
        let a = acceleration
        let (duration, top) = timing(leg)
        let ramp = top / a
        if t <= 0 { return (0, 0) }
        if t >= duration { return (leg.distance, 0) }
        if t < ramp { return (a * t * t / 2, a * t) }
        if t > duration - ramp {
            let r = duration - t
            return (leg.distance - a * r * r / 2, a * r)
        }
        return (top * ramp / 2 + top * (t - ramp), top)
    }

    /// The legs' start and end times (the vehicle moves between them), from the drive's start.
    public var legTimes: [(start: Date, end: Date)] {
        var t = firstPark
        return legs.map { leg in
            let begin = t
            t += Self.timing(leg).duration
            defer { t += leg.park }
            return (start.addingTimeInterval(begin), start.addingTimeInterval(t))
        }
    }

    /// Seconds from the start to the end of the last park.
    public var duration: Double { firstPark + legs.reduce(0) { $0 + Self.timing($1).duration + $1.park } }

    /// The truth at every whole second.
    public var samples: [Sample] {
        var out: [Sample] = []
        var position = origin
        var heading = 0.0
        var legStart = firstPark
        var index = 0
        for k in 0...Int(duration) {
            let t = Double(k)
            while index < legs.count, t >= legStart + Self.timing(legs[index]).duration + legs[index].park {
                let leg = legs[index]
                position = Offsets.moved(position, metres: leg.distance, bearing: heading)
                heading += leg.turn
                legStart += Self.timing(leg).duration + leg.park
                index += 1
            }
            var here = position
            var velocity = (east: 0.0, north: 0.0)
            if index < legs.count, t >= legStart {
                let (s, v) = Self.along(legs[index], t - legStart)
                here = Offsets.moved(position, metres: s, bearing: heading)
                let b = heading * .pi / 180
                velocity = (v * sin(b), v * cos(b))
            }
            out.append(Sample(time: start.addingTimeInterval(t), coordinate: here, velocity: velocity))
        }
        return out
    }

    /// The truth's stops at `minimalParking` seconds or more (the first park, as the drive starts there,
    /// included), and its trips between them with their distances.
    public func truth(minimalParking: Double) -> (stops: [(arrival: Date, departure: Date?)], trips: [Double]) {
        let times = legTimes
        var stops: [(Date, Date?)] = [(start, times.first?.start)]
        var trips: [Double] = []
        var distance = 0.0
        for (k, leg) in legs.enumerated() {
            distance += leg.distance
            let isLast = k == legs.count - 1
            if leg.park >= minimalParking || isLast {
                stops.append((times[k].end, isLast ? nil : times[k + 1].start))
                trips.append(distance)
                distance = 0
            }
        }
        return (stops, trips)
    }

    /// A day's errands: 5 to 9 legs of 600 m to 4 km at 8 to 25 m/s, after each a park of 20 to 120 s (a
    /// light, a queue) or 6 to 20 minutes (a stop); the last park 7 minutes.
    public static func errands(_ rng: inout SplitMix64) -> StopAndGoDrive {
        let count = Int.random(in: 5...9, using: &rng)
        let legs = (0..<count).map { k in
            Leg(
                distance: Double.random(in: 600...4000, using: &rng), cruise: Double.random(in: 8...25, using: &rng),
                park: k == count - 1
                    ? 420
                    : Bool.random(using: &rng)
                        ? Double.random(in: 20...120, using: &rng) : Double.random(in: 360...1200, using: &rng),
                turn: Double.random(in: -120...120, using: &rng))
        }
        return StopAndGoDrive(legs: legs)
    }

    /// Multipath jumps over the drive: 50–300 m in any direction for 3–10 s, every 1 to 3 minutes, moving
    /// or parked.
    public func jumps(_ rng: inout SplitMix64) -> [MultipathEpisode] {
        var episodes: [MultipathEpisode] = []
        var t = 30.0
        while t < duration - 30 {
            episodes.append(
                MultipathEpisode(
                    start: start.addingTimeInterval(t), ramp: 1, hold: Double.random(in: 1...8, using: &rng),
                    offset: Double.random(in: 50...300, using: &rng), bearing: Double.random(in: 0..<360, using: &rng)))
            t += Double.random(in: 60...180, using: &rng)
        }
        return episodes
    }

    /// The receiver's fixes along the truth.
    public func fixes(_ profile: SimulatedReceiver.Profile, seed: UInt64, episodes: [MultipathEpisode] = [])
        -> [Location]
    {
        var receiver = SimulatedReceiver(profile, seed: seed)
        receiver.episodes = episodes
        return samples.map { receiver.fix(truth: $0.coordinate, velocity: $0.velocity, at: $0.time) }
    }
}
