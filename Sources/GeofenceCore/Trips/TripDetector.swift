import Foundation

/// Trips and stops from the fixes the monitors see (docs/trips.md). Pure: the same fixes give the same
/// events.
///
/// Motion is the Doppler speed's where the receiver gives one: at rest from the first fix slower than
/// `rest.movingSpeed`, moving again at `rest.breakFixes` faster fixes in a row. Multipath moves a parked
/// vehicle's positions, not its Doppler, so a jump breaks no rest; the stop's position is the median of
/// the rest's trusted positions. Without Doppler it is the rest detection's (`StationaryDetector`, as
/// `isStationary`), fed every fix but the motion check's excursions. A rest becomes a stop once it has lasted
/// `minimalParkingDuration`; the trip before it ends at the rest's first fix. A movement from a stop becomes a trip once it has covered
/// `minimalTripDistance` or lasted `minimalTripDuration`; the stop ends at the movement's first fix. Shorter
/// rests stay in the trip, shorter movements in the stop.
///
/// The odometer integrates the Doppler speed (the mean of two fixes' over the interval) while the vehicle
/// moves: multipath pulls positions aside, not the Doppler, so a jump adds nothing. Without Doppler it adds
/// the distance between positions the motion check did not call excursions.
public struct TripDetector: Sendable {
    public let settings: TripSettings

    /// Where the detector is: the state a restart resumes from.
    public enum Phase: Sendable, Equatable, Codable {
        /// No trip or stop recognised yet.
        case unknown
        case parked(Stop)
        case driving(Trip)
    }
    public private(set) var phase: Phase = .unknown

    private var motion: StationaryDetector
    /// By the Doppler speed: the first fix of the current rest (nil while moving), faster fixes in a row,
    /// and the rest's trusted positions.
    private var restSince: Date?
    private var fastRun = 0
    private var restPositions: [Coordinate] = []
    /// A movement not yet a trip: since when, from where, how far.
    private var departure: (time: Date, coordinate: Coordinate, distance: Double, maximumSpeed: Double)?
    /// The last fix used, and the last whose position was trusted.
    private var last: Location?
    private var lastTrusted: Location?
    /// The first fix whose Doppler speed showed motion since the vehicle was last at rest: where a
    /// departure begins (the rest detection is sure of it a fix later).
    private var firstMotion: Date?

    public init(settings: TripSettings = TripSettings(), correlationTime: Double = 60) {
        self.settings = settings
        motion = StationaryDetector(settings: settings.rest, correlationTime: correlationTime)
    }

    /// Resumes from a phase a previous run stored: a trip in progress goes on, not split in two. The way
    /// driven between the stored phase and the first fix after it is counted as the straight line from the
    /// trip's last stored position (a crash loses the detour, not the distance).
    public init(settings: TripSettings = TripSettings(), correlationTime: Double = 60, resuming phase: Phase) {
        self.init(settings: settings, correlationTime: correlationTime)
        self.phase = phase
        resumed = true
    }
    private var resumed = false

    /// Feeds one fix; `inside` names the conditions the vehicle is in, asked only when a stop begins.
    public mutating func process(_ fix: Location, inside: () -> [String] = { [] }) -> [TripEvent] {
        guard fix.mode != .noFix, fix.coordinate.isValid else { return [] }
        if let last, fix.timestamp <= last.timestamp { return [] }
        var events: [TripEvent] = []
        if let last, fix.timestamp.timeIntervalSince(last.timestamp) > settings.minimalNoDataDuration {
            events += endAfterSilence(at: last, inside: inside)
        }
        if resumed {
            resumed = false
            events += resume(at: fix, inside: inside)
        }
        let trusted = fix.motionVerdict != .excursion
        let step = travel(to: fix, trusted: trusted)
        let rest = follow(fix, trusted: trusted)
        if trusted { lastTrusted = fix }
        let moving = rest == nil
        let distance = moving ? step : 0
        last = fix

        switch phase {
        case .unknown, .parked:
            events += departing(fix, distance: distance, rest: rest, inside: inside)
        case .driving(var trip):
            trip.distance += distance
            if moving, fix.speed.isFinite { trip.maximumSpeed = max(trip.maximumSpeed, fix.speed) }
            trip.lastFix = fix.timestamp
            if trusted { trip.lastCoordinate = fix.coordinate }
            if let rest, fix.timestamp.timeIntervalSince(rest.since) >= settings.minimalParkingDuration {
                let position = coordinate(of: rest, at: fix)
                trip.end = rest.since
                trip.endCoordinate = position
                let stop = Stop(
                    arrival: rest.since, coordinate: position, horizontalAccuracy: rest.accuracy,
                    conditions: inside())
                events += [.tripEnded(trip), .stopStarted(stop)]
                phase = .parked(stop)
            } else {
                phase = .driving(trip)
            }
        }
        return events
    }

    /// From a stop (or before anything is known): a movement that qualifies starts a trip, a rest long
    /// enough (before anything is known) starts a stop.
    private mutating func departing(_ fix: Location, distance: Double, rest: Rest?, inside: () -> [String])
        -> [TripEvent]
    {
        if let rest {
            departure = nil
            if case .unknown = phase, fix.timestamp.timeIntervalSince(rest.since) >= settings.minimalParkingDuration {
                let stop = Stop(
                    arrival: rest.since, coordinate: coordinate(of: rest, at: fix), horizontalAccuracy: rest.accuracy,
                    conditions: inside())
                phase = .parked(stop)
                return [.stopStarted(stop)]
            }
            return []
        }
        if departure == nil {
            // The stop ends at the first fix after its rest; with no stop, the trip starts at this fix.
            let from: Coordinate
            if case .parked(let stop) = phase { from = stop.coordinate } else { from = fix.coordinate }
            departure = (firstMotion ?? fix.timestamp, from, 0, 0)
        }
        departure!.distance += distance
        if fix.speed.isFinite { departure!.maximumSpeed = max(departure!.maximumSpeed, fix.speed) }
        let d = departure!
        guard
            d.distance >= settings.minimalTripDistance
                || fix.timestamp.timeIntervalSince(d.time) >= settings.minimalTripDuration
        else { return [] }
        departure = nil
        var trip = Trip(
            start: d.time, startCoordinate: d.coordinate, distance: d.distance, maximumSpeed: d.maximumSpeed,
            lastFix: fix.timestamp)
        trip.lastCoordinate = fix.motionVerdict == .excursion ? lastTrusted?.coordinate : fix.coordinate
        var events: [TripEvent] = []
        if case .parked(var stop) = phase {
            stop.departure = d.time
            events.append(.stopEnded(stop))
        }
        events.append(.tripStarted(trip))
        phase = .driving(trip)
        return events
    }

    /// The first fix after a restart: a trip stored in progress gains the straight line from its last stored
    /// position, or ends there when the silence was longer than `minimalNoDataDuration`.
    private mutating func resume(at fix: Location, inside: () -> [String]) -> [TripEvent] {
        guard case .driving(var trip) = phase, let from = trip.lastCoordinate else { return [] }
        if fix.timestamp.timeIntervalSince(trip.lastFix) > settings.minimalNoDataDuration {
            return endTrip(trip, at: trip.lastFix, where: from, accuracy: fix.horizontalAccuracy, inside: inside)
        }
        if fix.timestamp > trip.lastFix { trip.distance += Geodesic.distance(from, fix.coordinate) }
        phase = .driving(trip)
        return []
    }

    /// After a silence longer than `minimalNoDataDuration`, a trip ends at its last fix and a stop starts
    /// there; a stop goes on (a parked vehicle's agent is often switched off).
    private mutating func endAfterSilence(at last: Location, inside: () -> [String]) -> [TripEvent] {
        motion = StationaryDetector(settings: settings.rest, correlationTime: motion.correlationTime)
        departure = nil
        firstMotion = nil
        restSince = nil
        fastRun = 0
        restPositions.removeAll()
        guard case .driving(let trip) = phase else { return [] }
        return endTrip(
            trip, at: last.timestamp, where: lastTrusted?.coordinate ?? last.coordinate,
            accuracy: last.horizontalAccuracy, inside: inside)
    }

    /// Ends a trip where the fixes stopped (a silence), and starts a stop there.
    private mutating func endTrip(
        _ trip: Trip, at time: Date, where position: Coordinate, accuracy: Double, inside: () -> [String]
    ) -> [TripEvent] {
        var trip = trip
        trip.end = time
        trip.endCoordinate = position
        let stop = Stop(
            arrival: time, coordinate: position, horizontalAccuracy: max(accuracy, 0), conditions: inside())
        phase = .parked(stop)
        return [.tripEnded(trip), .stopStarted(stop)]
    }

    /// Where a rest is: since when, and the accuracy a stop takes. Its position (`coordinate(of:)`) is
    /// worked out only when a stop begins: a median of hundreds of positions at every fix would cost a
    /// parked vehicle's CPU for nothing.
    struct Rest {
        var since: Date
        var accuracy: Double
        /// Without Doppler: the rest detection's mean.
        var mean: Coordinate?
    }

    /// The stop's position for a rest: the median of its trusted positions (or the rest detection's mean).
    private func coordinate(of rest: Rest, at fix: Location) -> Coordinate {
        rest.mean ?? Self.median(restPositions) ?? fix.coordinate
    }

    /// Follows the motion to this fix: the rest the vehicle is in, or nil while it moves.
    private mutating func follow(_ fix: Location, trusted: Bool) -> Rest? {
        guard fix.speed.isFinite, fix.speed >= 0 else {
            // No Doppler: the rest detection of positions.
            if trusted { motion.update(fix) }
            guard motion.motion == .stationary, let rest = motion.rest else { return nil }
            return Rest(
                since: fix.timestamp.addingTimeInterval(-rest.duration), accuracy: rest.horizontalAccuracy,
                mean: rest.mean)
        }
        if fix.speed >= settings.rest.movingSpeed {
            fastRun += 1
            if fastRun == 1 { firstMotion = fix.timestamp }
            if fastRun >= max(1, settings.rest.breakFixes) {
                restSince = nil
                restPositions.removeAll(keepingCapacity: true)
            }
        } else {
            fastRun = 0
            firstMotion = nil
            if restSince == nil { restSince = fix.timestamp }
            // Ten minutes of positions place a stop; a night's would only cost memory.
            if trusted, restPositions.count < 600 { restPositions.append(fix.coordinate) }
        }
        guard let since = restSince else { return nil }
        return Rest(since: since, accuracy: max(fix.horizontalAccuracy, 0))
    }

    /// The coordinate-wise median: a jump's positions, a minority, do not move it.
    static func median(_ points: [Coordinate]) -> Coordinate? {
        guard !points.isEmpty else { return nil }
        let lat = points.map(\.latitude).sorted()
        let lon = points.map(\.longitude).sorted()
        return Coordinate(latitude: lat[lat.count / 2], longitude: lon[lon.count / 2])
    }

    /// Metres since the last fix: the Doppler speed's mean over the interval when both fixes have one,
    /// else the distance from the last trusted position (nothing from an excursion's).
    private func travel(to fix: Location, trusted: Bool) -> Double {
        guard let last else { return 0 }
        let dt = fix.timestamp.timeIntervalSince(last.timestamp)
        if dt <= settings.rest.duration, last.speed.isFinite, last.speed >= 0, fix.speed.isFinite, fix.speed >= 0 {
            return (last.speed + fix.speed) / 2 * dt
        }
        guard trusted, let from = lastTrusted else { return 0 }
        return Geodesic.distance(from.coordinate, fix.coordinate)
    }
}
