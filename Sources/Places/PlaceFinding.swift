import GeofenceCore

/// Names the place at a position, in microseconds and with no I/O (the fix path calls it).
package protocol PlaceFinding: Sendable {
    func place(at coordinate: Coordinate) -> PlaceSummary?
}
