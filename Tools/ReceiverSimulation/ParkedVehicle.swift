import Foundation
import GeofenceCore

/// A vehicle parked among fences whose boundaries pass 0.5 to 10 m from it, inside and outside: circles,
/// polygon edges, polygon vertices and corridor edges. Its receiver reports a fix every second.
public struct ParkedVehicle: Sendable {
    public struct Fence: Sendable {
        public var identifier: String
        public var condition: Condition
        /// How far inside (positive) or outside (negative) the boundary the vehicle truly is, metres.
        public var depth: Double
    }

    public struct Result: Sendable {
        /// enter, exit and crossed events after the vehicle was parked: each one is a flap.
        public var transitions: Int
        public var initials: Int
        /// Fences still unknown at the end.
        public var unknown: Int
        public var fences: Int
        public var flappingFences: Set<String>
        /// Initial states on the wrong side of the boundary.
        public var wrongInitials: Int
    }

    public static let depths: [Double] = [0.5, 1, 2, 3, 5, 10]
    public let position: Coordinate
    public let fences: [Fence]

    public init(position: Coordinate = Coordinate(latitude: 52.37, longitude: 4.89), depths: [Double] = Self.depths) {
        self.position = position
        var fences: [Fence] = []
        for d in depths {
            for side in [1.0, -1.0] {
                let depth = side * d
                let tag = "\(side > 0 ? "in" : "out")\(d)"
                fences.append(
                    Fence(
                        identifier: "circle-\(tag)",
                        condition: Self.circle(around: position, depth: depth, bearing: 37 * d), depth: depth))
                fences.append(
                    Fence(
                        identifier: "edge-\(tag)", condition: Self.squareEdge(at: position, depth: depth), depth: depth)
                )
                fences.append(
                    Fence(
                        identifier: "vertex-\(tag)", condition: Self.squareVertex(at: position, depth: depth),
                        depth: depth))
                fences.append(
                    Fence(
                        identifier: "corridor-\(tag)", condition: Self.corridorEdge(at: position, depth: depth),
                        depth: depth))
            }
        }
        self.fences = fences
    }

    /// A 60 m circle whose boundary passes `depth` metres from the position (inside when positive).
    static func circle(around p: Coordinate, depth: Double, bearing: Double) -> Condition {
        let radius = 60.0
        let centre = Offsets.moved(p, metres: radius - depth, bearing: bearing)
        return try! Condition.circle(center: centre, radius: radius)
    }

    /// A 400 m square whose east edge runs `depth` metres east of the position, level with its middle.
    static func squareEdge(at p: Coordinate, depth: Double) -> Condition {
        square(eastEdge: depth, northEdge: 200, around: p)
    }

    /// A 400 m square whose north-east corner lies beyond the position along the diagonal, so that the
    /// nearest boundary point is `depth` metres away: both edges for a position inside, the corner outside.
    static func squareVertex(at p: Coordinate, depth: Double) -> Condition {
        let offset = depth > 0 ? depth : depth / 2.0.squareRoot()
        return square(eastEdge: offset, northEdge: offset, around: p)
    }

    /// A square of side 400 m with its east and north edges at these distances east and north of `p`.
    private static func square(eastEdge: Double, northEdge: Double, around p: Coordinate) -> Condition {
        let e = eastEdge
        let n = northEdge
        let w = eastEdge - 400
        let s = northEdge - 400
        let ring = [(w, s), (e, s), (e, n), (w, n), (w, s)].map { Offsets.moved(p, east: $0.0, north: $0.1) }
        return try! Condition(geometry: .polygon(parts: [[ring]]))
    }

    /// A north-south corridor 30 m wide whose western edge runs `depth` metres west of the position.
    static func corridorEdge(at p: Coordinate, depth: Double) -> Condition {
        let halfWidth = 15.0
        let x = halfWidth - depth
        let line = [Offsets.moved(p, east: x, north: -500), Offsets.moved(p, east: x, north: 500)]
        return try! Condition(geometry: .corridor(line: line, halfWidth: halfWidth))
    }

    /// Parks for `hours` with this receiver and counts what the monitor did.
    public func run(
        _ profile: SimulatedReceiver.Profile, seed: UInt64, hours: Double,
        configuration: MonitorConfiguration = MonitorConfiguration()
    ) -> Result {
        // Through the agent's loop, motion check included.
        var monitors = MonitorSet(configuration: configuration)
        for fence in fences { monitors.add(fence.condition, identifier: fence.identifier, monitor: "parked") }
        var receiver = SimulatedReceiver(profile, seed: seed)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        var transitions = 0
        var initials = 0
        var wrongInitials = 0
        var flapping: Set<String> = []
        let depthOf = Dictionary(uniqueKeysWithValues: fences.map { ($0.identifier, $0.depth) })
        for k in 0..<Int(hours * 3600) {
            let fix = receiver.fix(truth: position, at: start.addingTimeInterval(Double(k)))
            for event in monitors.process(fix).steps.flatMap(\.events) {
                switch event.kind {
                case .initial:
                    initials += 1
                    if (event.state == .satisfied) != (depthOf[event.identifier]! > 0) { wrongInitials += 1 }
                case .enter, .exit, .crossed:
                    transitions += 1
                    flapping.insert(event.identifier)
                case .dwell, .overspeed, .overspeedEnded, .active, .inactive:
                    break
                }
            }
        }
        let unknown = fences.filter { monitors["parked"]?.record(for: $0.identifier)?.state == .unknown }.count
        return Result(
            transitions: transitions, initials: initials, unknown: unknown, fences: fences.count,
            flappingFences: flapping, wrongInitials: wrongInitials)
    }
}
