import Foundation

/// Every monitor of a vehicle by name, each offered every fix in name order: the one loop that the agent,
/// `simulate` and `Monitor` drive, so that a replay through `simulate` gives the agent's events by
/// construction.
public struct MonitorSet: Sendable {
    /// The monitor that conditions without `properties.monitor` belong to.
    public static let defaultMonitor = "default"

    public let configuration: MonitorConfiguration
    /// The engines in name order, beside `names`: a fix visits them by position, with no hashing of names
    /// and no copy of an engine.
    private var engines: [MonitorEngine] = []
    /// Each name's position in `engines`.
    private var positions: [String: Int] = [:]
    /// The names, sorted: the order every fix visits the monitors in.
    public private(set) var names: [String] = []
    /// The one motion-consistency check every consumer of a fix shares: monitors, live updates, trips.
    public private(set) var motionCheck: MotionCheck
    /// Trips and stops, from the same fixes.
    public private(set) var trips: TripDetector

    public init(
        configuration: MonitorConfiguration = MonitorConfiguration(), trips phase: TripDetector.Phase = .unknown
    ) {
        self.configuration = configuration
        motionCheck = MotionCheck(configuration: configuration)
        trips = TripDetector(
            settings: configuration.trips, correlationTime: configuration.noiseCorrelationTime, resuming: phase)
    }

    public subscript(name: String) -> MonitorEngine? { positions[name].map { engines[$0] } }

    /// Adds a monitor (one restored from the store), replacing one of the same name.
    public mutating func insert(_ engine: MonitorEngine) {
        if let position = positions[engine.name] {
            engines[position] = engine
            return
        }
        let position = names.firstIndex { $0 > engine.name } ?? names.count
        names.insert(engine.name, at: position)
        engines.insert(engine, at: position)
        for index in position..<names.count { positions[names[index]] = index }
    }

    /// Adds a condition to a monitor, which is made when new.
    public mutating func add(_ condition: Condition, identifier: String, monitor: String) {
        if positions[monitor] == nil { insert(MonitorEngine(name: monitor, configuration: configuration)) }
        engines[positions[monitor]!].add(condition, identifier: identifier)
    }

    /// Changes one monitor in place (no copy of its conditions); nil when there is none of that name.
    @discardableResult
    public mutating func withEngine<T>(_ name: String, _ body: (inout MonitorEngine) throws -> T) rethrows -> T? {
        guard let position = positions[name] else { return nil }
        return try body(&engines[position])
    }

    /// The exits (reason `removed`) that removing these conditions means, before they are removed: one for
    /// each monitor whose vehicle is inside one, at its last accepted fix, in the changes' order then monitor
    /// name order, each pair once. A nil `monitor` removes the identifier from every monitor. The one place
    /// this rule lives: the agent stores these exits in the transaction that deletes the conditions.
    public func removalExits(
        _ removals: [(identifier: String, monitor: String?)]
    ) -> [(monitor: String, event: MonitorEvent, conditionVersion: Int64?)] {
        var seen: Set<[String]> = []
        var exits: [(monitor: String, event: MonitorEvent, conditionVersion: Int64?)] = []
        for (identifier, monitor) in removals {
            for (name, engine) in zip(names, engines) where monitor == nil || monitor == name {
                guard seen.insert([name, identifier]).inserted, let event = engine.removalExit(identifier),
                    event.isNotified
                else { continue }
                exits.append((name, event, engine.record(for: identifier)?.condition.version))
            }
        }
        return exits
    }

    public mutating func remove(_ identifier: String, monitor: String) {
        guard let position = positions[monitor] else { return }
        engines[position].remove(identifier)
    }

    /// Conditions held by each monitor, in `names` order, with no copy of an engine.
    public var conditionCounts: [Int] { engines.map(\.count) }

    /// Conditions held, over every monitor.
    public var conditionCount: Int { engines.reduce(0) { $0 + $1.count } }

    /// The latest fix any monitor accepted (restored after a restart): the timeline resumes after it.
    public var lastAcceptedFixTime: Date? { engines.compactMap { $0.lastAcceptedFix?.timestamp }.max() }

    /// What one fix did in one monitor.
    public struct Step: Sendable {
        public var monitor: String
        /// Every event, those a condition's `notify` leaves out included: each moved a record.
        public var events: [MonitorEvent]
        /// Conditions that expired at this fix: they leave the store with their exits.
        public var expired: [String]
    }

    /// What one fix did.
    public struct FixResult: Sendable {
        /// The fix with the motion check's verdict: what the live updates and every other consumer take.
        public var location: Location
        /// Whether any monitor was offered the fix.
        public var offered = false
        /// Why the fix was refused, by the first monitor's verdict (every monitor filters fixes alike).
        public var rejection: FixRejection?
        /// The monitors where something happened, in name order.
        public var steps: [Step] = []
        /// Trips and stops that began or ended at this fix.
        public var tripEvents: [TripEvent] = []
    }

    /// Offers a fix to every monitor, in name order.
    public mutating func process(_ fix: Location) -> FixResult {
        var location = fix
        location.motionVerdict = motionCheck.check(fix)
        var result = FixResult(location: location)
        if location.motionVerdict == .excursion { result.rejection = .excursion }
        for (position, name) in names.enumerated() {
            let (outcome, expired) = Self.offer(location, to: &engines[position])
            if !result.offered {
                result.offered = true
                if case .rejected(let reason) = outcome { result.rejection = reason }
            }
            guard case .accepted(let events) = outcome else { continue }
            if !events.isEmpty || !expired.isEmpty {
                result.steps.append(Step(monitor: name, events: events, expired: expired))
            }
        }
        // What a stop is inside, asked only when one begins (the array is shared, not copied).
        let engines = self.engines
        result.tripEvents = trips.process(location) {
            engines.flatMap(\.satisfiedIdentifiers).sorted()
        }
        return result
    }

    private static func offer(_ location: Location, to engine: inout MonitorEngine) -> (FixOutcome, [String]) {
        let outcome = engine.process(location)
        guard case .accepted = outcome else { return (outcome, []) }
        return (outcome, engine.expiredIdentifiers)
    }
}

extension EventKind {
    /// The kinds the agent publishes: every kind but `initial`, which moves a record and which `simulate`
    /// prints, but which no consumer is sent.
    public static let published: Set<EventKind> = [
        .enter, .exit, .dwell, .crossed, .overspeed, .overspeedEnded, .active, .inactive,
    ]
}

extension MonitorEvent {
    /// Published by the agent: a published kind its condition's `notify` asks for.
    public var isPublished: Bool { isNotified && EventKind.published.contains(kind) }
}
