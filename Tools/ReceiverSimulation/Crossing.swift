import Foundation
import GeofenceCore

/// A vehicle that drives straight into a fence at a steady speed, crossing its boundary at an angle, turns
/// round and drives out the same way: two crossings, each of which must give exactly one transition.
public struct Crossing: Sendable {
    public enum Shape: String, Sendable, CaseIterable {
        /// A 20 km circle (its boundary is all but straight where the vehicle crosses).
        case circle
        /// The west edge of a 10 km square.
        case polygon
        /// The west edge of a 4 km wide corridor.
        case corridor
    }

    public struct Result: Sendable {
        /// The enter, exit and crossed events, in order (initial left out).
        public var transitions: [EventKind]
        /// For each transition: how far past the boundary the vehicle truly was, metres along the boundary's
        /// normal, when it was reported (negative: before it crossed).
        public var delays: [Double]
        /// The same for the position the decision rested on (the fix).
        public var evidenceDelays: [Double]
        /// The margin each transition's evidence needed.
        public var margins: [Double]
        /// For each transition: whether it came with the first fix that was past the boundary by its margin
        /// (within a centimetre) and taken as evidence (not an excursion), neither earlier nor later: the rule
        /// itself then adds no delay.
        public var atFirstConfidentFix: [Bool] = []
        /// Whether it behaved: one enter on the way in, one exit on the way out.
        public var isExact: Bool { transitions == [.enter, .exit] }
    }

    public var shape: Shape
    /// m/s.
    public var speed: Double
    /// Degrees between the path and the boundary: 90 drives straight across.
    public var angle: Double
    let crossingPoint = Coordinate(latitude: 52.37, longitude: 4.89)

    public init(shape: Shape, speed: Double, angle: Double) {
        self.shape = shape
        self.speed = speed
        self.angle = angle
    }

    /// The fence; its boundary runs north-south through the crossing point, inside to the east.
    public var condition: Condition {
        let p = crossingPoint
        switch shape {
        case .circle:
            return try! Condition.circle(center: Offsets.moved(p, east: 20_000, north: 0), radius: 20_000)
        case .polygon:
            let ring = [(0.0, -5000.0), (10_000, -5000), (10_000, 5000), (0, 5000), (0, -5000)].map {
                Offsets.moved(p, east: $0.0, north: $0.1)
            }
            return try! Condition(geometry: .polygon(parts: [[ring]]))
        case .corridor:
            let line = [Offsets.moved(p, east: 2000, north: -20_000), Offsets.moved(p, east: 2000, north: 20_000)]
            return try! Condition(geometry: .corridor(line: line, halfWidth: 2000))
        }
    }

    /// How far inside the boundary (metres along its normal) a position is; negative outside.
    public func depth(of c: Coordinate) -> Double {
        switch shape {
        case .circle:
            return 20_000 - Geodesic.distance(Offsets.moved(crossingPoint, east: 20_000, north: 0), c)
        case .polygon, .corridor:
            // East of the crossing point's meridian, in metres at its latitude.
            return (c.longitude - crossingPoint.longitude) * .pi / 180
                * Offsets.metresPerRadianOfLongitude(at: crossingPoint.latitude)
        }
    }

    /// Whether a position is past the boundary, on the side the vehicle is heading for, by more than
    /// `margin`: measured by the fence itself, as the monitor measures its evidence. `depth(of:)` is flat
    /// about the crossing point's meridian, which is a centimetre off the ellipsoid 2 km from the corridor's
    /// line: enough to put a fix on the wrong side of a centimetre's tolerance.
    static func isPast(_ c: Coordinate, of fence: Region, inbound: Bool, by margin: Double) -> Bool {
        fence.classify(PreparedPoint(c), margin: margin) == (inbound ? .inside : .outside)
    }

    /// Drives in and out once with this receiver.
    public func run(
        _ profile: SimulatedReceiver.Profile, seed: UInt64, configuration: MonitorConfiguration = MonitorConfiguration()
    ) -> Result {
        // Through the agent's loop, motion check included.
        var monitors = MonitorSet(configuration: configuration)
        let fence = condition
        monitors.add(fence, identifier: "fence", monitor: "crossing")
        var receiver = SimulatedReceiver(profile, seed: seed)
        let rule = DecisionRule(configuration)
        // Far enough that the approach is well clear of any margin, and a minute of driving at least.
        // The boundary falls anywhere between two fixes, not on one.
        var phase = SplitMix64(seed: seed ^ 0x5EED)
        let leg =
            max(60 * speed, 150 / sin(angle * .pi / 180) + 20 * speed) + Double.random(in: 0..<1, using: &phase) * speed
        let direction = (east: sin(angle * .pi / 180), north: cos(angle * .pi / 180))
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        // Past the fence the vehicle brakes, reverses and comes back, as a vehicle can: at 5 m/s², not in
        // an instant (a Doppler velocity that flips in one fix is not a motion anything can check).
        let braking = 5.0
        let cruise = 2 * leg / speed
        let turn = 2 * speed / braking
        let steps = Int((2 * cruise + turn).rounded(.up))
        var truths: [Date: Coordinate] = [:]
        var result = Result(transitions: [], delays: [], evidenceDelays: [], margins: [])
        // Per leg (in, out): the first fix that may be, and the first that surely is, past its margin.
        var firstMaybe: [Date?] = [nil, nil]
        var firstSure: [Date?] = [nil, nil]
        for k in 0...steps {
            // Along the path: from -leg to +leg (in), a little beyond while turning, then back (out).
            let t = Double(k)
            let s: Double
            let velocity: Double
            if t <= cruise {
                (s, velocity) = (t * speed - leg, speed)
            } else if t <= cruise + turn {
                let u = t - cruise
                (s, velocity) = (leg + speed * u - braking * u * u / 2, speed - braking * u)
            } else {
                (s, velocity) = (leg - (t - cruise - turn) * speed, -speed)
            }
            let inbound = t <= cruise + turn / 2
            let truth = Offsets.moved(crossingPoint, east: s * direction.east, north: s * direction.north)
            let time = start.addingTimeInterval(t)
            truths[time] = truth
            let fix = receiver.fix(
                truth: truth, velocity: (velocity * direction.east, velocity * direction.north), at: time)
            let leg = inbound ? 0 : 1
            let processed = monitors.process(fix)
            // Only a fix the monitors take is evidence: one the motion check calls an excursion (or the filter
            // refuses) is none, however far past the boundary it is.
            if processed.rejection == nil {
                let margin = rule.margin(forAccuracy: fix.horizontalAccuracy)
                let past = { Self.isPast(fix.coordinate, of: fence.region, inbound: inbound, by: $0) }
                if firstMaybe[leg] == nil, past(margin - 0.01) { firstMaybe[leg] = time }
                if firstSure[leg] == nil, past(margin + 0.01) { firstSure[leg] = time }
            }
            for event in processed.steps.flatMap(\.events) where event.kind != .initial {
                result.transitions.append(event.kind)
                let entering = event.kind == .enter
                let truthThen = truths[event.date] ?? truth
                result.delays.append(entering ? depth(of: truthThen) : -depth(of: truthThen))
                result.evidenceDelays.append(
                    entering ? depth(of: event.location.coordinate) : -depth(of: event.location.coordinate))
                result.margins.append(rule.margin(forAccuracy: event.location.horizontalAccuracy))
                let eventLeg = entering ? 0 : 1
                result.atFirstConfidentFix.append(
                    firstMaybe[eventLeg].map { $0 <= event.date } == true
                        && (firstSure[eventLeg].map { event.date <= $0 } ?? true))
            }
        }
        return result
    }
}
