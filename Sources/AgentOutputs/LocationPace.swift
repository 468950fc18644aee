import Foundation

/// How often an output replaces a vehicle's latest location (pure, on the fixes' timeline): at most every
/// `movingSeconds` while moving, every `parkedSeconds` while parked, and at once when the vehicle stops or
/// moves off. Each output keeps its own, so that a consumer that wants little is sent little.
struct LocationPace: Sendable, Equatable {
    var movingSeconds: Double
    var parkedSeconds: Double
    private var last: Date?
    private var lastStationary: Bool?

    init(movingSeconds: Double, parkedSeconds: Double) {
        self.movingSeconds = movingSeconds
        self.parkedSeconds = parkedSeconds
    }

    /// Whether a live update at `time` is sent; when it is, the pace counts from it.
    mutating func take(at time: Date, stationary: Bool) -> Bool {
        let changed = lastStationary != stationary
        lastStationary = stationary
        let interval = stationary ? parkedSeconds : movingSeconds
        // A time before the last one (a clock that went back) sends, rather than waiting for it to catch up.
        guard changed || last.map({ time.timeIntervalSince($0) >= interval || time < $0 }) ?? true else {
            return false
        }
        last = time
        return true
    }

    /// A location was sent for another reason (a request, a transition): the pace counts from it.
    mutating func sent(at time: Date) { last = time }
}

extension OutputState where Value == LocationPace {
    /// Whether an output on this pace sends `l`: a live update when its time has come; an answer to a
    /// request or where a transition happened always, and the pace counts from it.
    func allows(_ l: LocationHappening) -> Bool {
        let time = l.update.location.timestamp
        return state.withLock { pace in
            guard l.reason == .liveUpdate else {
                pace.sent(at: time)
                return true
            }
            return pace.take(at: time, stationary: l.update.isStationary)
        }
    }
}
