import Foundation

/// How trips and stops are told apart (docs/trips.md). The defaults are Traccar's report parameters; its
/// speed threshold is replaced by the rest detection behind live updates' `isStationary`.
public struct TripSettings: Sendable, Equatable, Codable {
    /// A movement becomes a trip once it has covered this many metres...
    public var minimalTripDistance = 500.0
    /// ...or lasted this many seconds.
    public var minimalTripDuration = 300.0
    /// A rest becomes a stop once it has lasted this many seconds; shorter ones (lights, queues) are
    /// part of the trip.
    public var minimalParkingDuration = 300.0
    /// Fixes this many seconds apart end a trip at the first of them (the vehicle was switched off).
    public var minimalNoDataDuration = 3600.0
    /// How a rest is recognised.
    public var rest = RestDetection()

    public init() {}
}

/// A trip: from the end of one stop to the start of the next.
public struct Trip: Sendable, Equatable, Codable {
    public var start: Date
    public var startCoordinate: Coordinate
    /// Nil while the trip goes on.
    public var end: Date?
    public var endCoordinate: Coordinate?
    /// Metres, integrated from the Doppler speed where the receiver gives one (multipath moves positions,
    /// not Doppler), else from the positions the motion check trusts.
    public var distance: Double
    /// m/s.
    public var maximumSpeed: Double
    /// The last fix counted, for a trip in progress.
    public var lastFix: Date
    /// Where the last trusted fix was: a trip resumed after a crash adds the way from here to its next fix.
    public var lastCoordinate: Coordinate?

    public init(
        start: Date, startCoordinate: Coordinate, end: Date? = nil, endCoordinate: Coordinate? = nil,
        distance: Double, maximumSpeed: Double, lastFix: Date
    ) {
        self.start = start
        self.startCoordinate = startCoordinate
        self.end = end
        self.endCoordinate = endCoordinate
        self.distance = distance
        self.maximumSpeed = maximumSpeed
        self.lastFix = lastFix
    }

    /// Seconds, to the end or to the last fix.
    public var duration: Double { (end ?? lastFix).timeIntervalSince(start) }
    /// m/s over the whole trip, stops shorter than a parking included.
    public var meanSpeed: Double { duration > 0 ? distance / duration : 0 }
}

/// A stop: the vehicle at rest for at least the minimal parking duration.
public struct Stop: Sendable, Equatable, Codable {
    public var arrival: Date
    /// Nil while the vehicle is there.
    public var departure: Date?
    /// The mean of the rest's fixes when the stop was recognised, and its 1-sigma radius.
    public var coordinate: Coordinate
    public var horizontalAccuracy: Double
    /// The conditions the vehicle was inside when the stop was recognised.
    public var conditions: [String]

    public init(
        arrival: Date, departure: Date? = nil, coordinate: Coordinate, horizontalAccuracy: Double,
        conditions: [String]
    ) {
        self.arrival = arrival
        self.departure = departure
        self.coordinate = coordinate
        self.horizontalAccuracy = horizontalAccuracy
        self.conditions = conditions
    }

    /// Seconds, to the departure or to `now`.
    public func duration(now: Date) -> Double { (departure ?? now).timeIntervalSince(arrival) }
}

/// What the trip detector reports, in the order it happens.
public enum TripEvent: Sendable, Equatable {
    case tripStarted(Trip)
    case tripEnded(Trip)
    case stopStarted(Stop)
    case stopEnded(Stop)

    /// The time the event is about: a trip's start or end, a stop's arrival or departure.
    public var date: Date {
        switch self {
        case .tripStarted(let t): t.start
        case .tripEnded(let t): t.end ?? t.lastFix
        case .stopStarted(let s): s.arrival
        case .stopEnded(let s): s.departure ?? s.arrival
        }
    }

    public var name: String {
        switch self {
        case .tripStarted: "tripStarted"
        case .tripEnded: "tripEnded"
        case .stopStarted: "stopStarted"
        case .stopEnded: "stopEnded"
        }
    }
}
