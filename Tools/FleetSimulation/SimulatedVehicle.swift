import Foundation
import GeofenceCore
import ReceiverSimulation

/// One vehicle's motion in the simulated fleet: it drives at 8 to 30 m/s with a wandering course, turns
/// back at the edge of the fleet's square, and now and then parks for a few minutes. Deterministic for
/// its random generator.
struct SimulatedVehicle: Sendable {
    var position: Coordinate
    var course: Double
    var speed: Double
    /// The vehicle is parked until then (seconds on the simulation's clock).
    var parkedUntil: Double = -1
    var cruise: Double
    let accuracy: Double

    init(at position: Coordinate, rng: inout SplitMix64) {
        self.position = position
        course = Double(rng.next() % 360)
        cruise = 8 + Double(rng.next() % 220) / 10
        speed = cruise
        accuracy = 2.5 + Double(rng.next() % 50) / 10
    }

    var isParked: Bool { speed == 0 }

    /// Moves one step of `seconds`, at simulation time `now`, kept within `side` metres of `centre`.
    mutating func step(seconds: Double, now: Double, centre: Coordinate, side: Double, rng: inout SplitMix64) {
        if parkedUntil > now { return }
        if isParked {
            speed = cruise
        } else if rng.next() % 400 == 0 {
            // About one stop every 7 minutes of driving, for one to five minutes.
            parkedUntil = now + 60 + Double(rng.next() % 240)
            speed = 0
            return
        }
        course = (course + Double(Int(rng.next() % 11) - 5) + 360).truncatingRemainder(dividingBy: 360)
        let radians = course * .pi / 180
        var next = Offsets.moved(
            position, east: speed * seconds * sin(radians), north: speed * seconds * cos(radians))
        let (east, north) = Self.offsets(of: next, from: centre)
        if abs(east) > side / 2 || abs(north) > side / 2 {
            // At the edge: head back towards the middle.
            course = (atan2(-east, -north) * 180 / .pi + 360).truncatingRemainder(dividingBy: 360)
            next = position
        }
        position = next
    }

    /// East and north of `centre` in metres, on a plane: the square is a few hundred kilometres at most.
    static func offsets(of c: Coordinate, from centre: Coordinate) -> (east: Double, north: Double) {
        let metresPerDegree = 111_320.0
        return (
            (c.longitude - centre.longitude) * metresPerDegree * cos(centre.latitude * .pi / 180),
            (c.latitude - centre.latitude) * metresPerDegree
        )
    }

    /// The fix a receiver on this vehicle reports now, with its Doppler speed and course.
    func location(at date: Date) -> Location {
        Location(
            coordinate: position, horizontalAccuracy: accuracy, speed: speed, speedAccuracy: 0.3,
            course: isParked ? -1 : course, timestamp: date, gpsTime: date)
    }
}
