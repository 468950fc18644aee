import AgentOutputs
import GeofenceCore

/// Which locations go out besides transitions: the live updates (`startMonitoringLocation`'s filter) and
/// the answers to `reportLocation`. Owned by the fix processor; pure, so that a fix's decision stays one
/// step without a suspension.
struct LocationReports {
    private var filter: LiveUpdateFilter
    /// Whether live updates are on (`cmd` `startLocation` / `stopLocation`, kept in the store).
    var started: Bool
    /// The last fix decided, with the motion check's verdict.
    private(set) var last: Location?
    private var lastStationary = false
    /// When `reportLocation` asked, until it is answered: by the next fix, or by the last one after
    /// `reportWait` without a fix.
    private var requestedAt: ContinuousClock.Instant?
    /// A live update the last fix made due, until `takeDue()`.
    private var due: LiveUpdate?

    /// How long an answer to `reportLocation` waits for a fresh fix before it settles for the last one.
    static let reportWait: Duration = .seconds(5)

    init(filter: LiveUpdateFilter, started: Bool) {
        self.filter = filter
        self.started = started
    }

    /// Whether a request waits for its answer.
    var isRequested: Bool { requestedAt != nil }

    /// Takes a fix's location in; true when a live update or an answer waits for `takeDue()`.
    mutating func observe(_ location: Location) -> Bool {
        last = location
        if started, let update = filter.update(location) {
            lastStationary = update.isStationary
            due = update
        }
        return due != nil || requestedAt != nil
    }

    /// Asked for a location: answered with the next fix, as OwnTracks' apps answer with a fresh one. A
    /// consumer that keeps only newer locations (OwnTracks Recorder's `last`) takes it, where the fix it
    /// already had would be refused as not newer.
    mutating func request(at now: ContinuousClock.Instant = .now) {
        if requestedAt == nil { requestedAt = now }
    }

    /// What goes out after a fix's commits, in this order: its live update, then the answer to a request.
    mutating func takeDue() -> [(update: LiveUpdate, reason: LocationHappening.Reason)] {
        var out: [(update: LiveUpdate, reason: LocationHappening.Reason)] = []
        if let update = due {
            due = nil
            out.append((update, .liveUpdate))
        }
        if requestedAt != nil, let last {
            requestedAt = nil
            out.append((LiveUpdate(location: last, isStationary: lastStationary), .requested))
        }
        return out
    }

    /// A request that no fix answered within `reportWait`.
    enum Overdue: Equatable {
        /// The last fix, with its own time: the receiver has nothing newer.
        case answer(LiveUpdate)
        /// No fix at all since the start.
        case noFix
    }

    /// The overdue request's answer, once; nil while none is overdue.
    mutating func takeOverdue(at now: ContinuousClock.Instant = .now) -> Overdue? {
        guard let requested = requestedAt, now - requested >= Self.reportWait else { return nil }
        requestedAt = nil
        guard let last else { return .noFix }
        return .answer(LiveUpdate(location: last, isStationary: lastStationary))
    }
}
