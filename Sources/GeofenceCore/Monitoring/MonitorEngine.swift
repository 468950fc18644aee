import Foundation

/// The result of offering one fix to a monitor.
public enum FixOutcome: Sendable, Equatable {
    /// The fix was used; these events followed from it (possibly none).
    case accepted([MonitorEvent])
    /// The fix never reached the conditions.
    case rejected(FixRejection)

    public var events: [MonitorEvent] {
        if case .accepted(let e) = self { return e }
        return []
    }
}

/// The monitor's state machine: conditions, their records and the fixes that move them. A value type
/// with no I/O, so it can be tested exhaustively, and restored by the store from what it persisted.
///
/// A state changes only on confident evidence (`DecisionRule`): a moving vehicle's fix, beyond the
/// boundary by z σ of its accuracy; a vehicle at rest, the mean of its rest, beyond by z σ of that mean.
/// Until the first fixes show whether the vehicle moves, nothing is decided. A transition may further
/// wait for its condition's minimum duration. Only conditions the spatial index offers for the point,
/// and the few that are satisfied, unknown or waiting, are evaluated: every other condition is
/// unsatisfied and stays so.
public struct MonitorEngine: Sendable {
    public let name: String
    public var configuration: MonitorConfiguration { rule.configuration }
    let rule: DecisionRule
    private var filter: FixFilter
    private var rest: StationaryDetector
    var overspeed: OverspeedDetector

    struct Slot: Sendable {
        var identifier: String
        var record: MonitorRecord
        /// A transition waiting for its minimum duration; boxed, as the fix in it would make each of
        /// 100,000 slots 190 bytes larger.
        var pending: PendingTransition? {
            get { boxedPending?.value }
            set { boxedPending = newValue.map(Boxed.init) }
        }
        private var boxedPending: Boxed<PendingTransition>?
        /// Whether a transition waits, without copying it out.
        var isPending: Bool { boxedPending != nil }

        init(identifier: String, record: MonitorRecord) {
            self.identifier = identifier
            self.record = record
        }
    }

    /// What every fix reads of a slot, kept apart from the slot (a few hundred bytes with references) so
    /// that reading it copies nothing. `updateWatch` keeps it in step with the slot.
    struct SlotStatus: Sendable {
        var state: ConditionState = .unsatisfied
        /// A transition waits for its minimum duration.
        var waiting = false
        /// The fix stamp at which the state last changed.
        var changedAt: UInt32 = 0
        /// While a dwell event is due: when the stay began (seconds since the reference date) and the dwell
        /// time; otherwise the dwell is infinite.
        var staySince = 0.0
        var dwell = Double.infinity
    }

    var slots: [Slot?] = []
    var status: [SlotStatus] = []
    private var slotByIdentifier: [String: Int] = [:]
    private var freeSlots: [Int] = []
    var index = SpatialIndex()
    /// Slots that are not simply `unsatisfied` (satisfied, unknown, or waiting to change): they are looked
    /// at on every fix.
    var watched: [Int32] = []
    private var watchedPosition: [Int32] = []
    var stamps: [UInt32] = []
    var stamp: UInt32 = 0
    /// Reused for each fix's index candidates, so that evaluating a fix allocates nothing for them.
    var scratch: [Int] = []
    /// The slots whose conditions expire, and the earliest of those times.
    var expiries: [Int: Date] = [:]
    var nextExpiry = Date.distantFuture
    /// Slots with a schedule, and where each schedule stood at the last fix.
    var scheduledSlots: Set<Int> = []
    var scheduleStates: [Int: ScheduleState] = [:]
    var unjudgedSchedules: Set<Int> = []
    /// Slots whose conditions have a speed limit.
    var speedZoneSlots: Set<Int> = []
    var scheduleMinute = Int.min
    /// The conditions the last fix removed because they expired (their records are gone).
    public internal(set) var expiredIdentifiers: [String] = []

    public init(name: String, configuration: MonitorConfiguration = MonitorConfiguration()) {
        self.name = name
        rule = DecisionRule(configuration)
        filter = FixFilter(configuration: configuration)
        rest = StationaryDetector(settings: configuration.rest, correlationTime: configuration.noiseCorrelationTime)
        overspeed = OverspeedDetector(settings: configuration.overspeed, confidence: configuration.confidence)
    }

    /// The last fix that was accepted.
    public var lastAcceptedFix: Location? { filter.lastAccepted }

    /// Whether the vehicle moves, as the decisions see it.
    public var motion: StationaryDetector.Motion { configuration.restAveraging ? rest.motion : .moving }

    public var identifiers: [String] { slotByIdentifier.keys.sorted() }
    public var count: Int { slotByIdentifier.count }

    func slot(of identifier: String) -> Int? { slotByIdentifier[identifier] }

    public func record(for identifier: String) -> MonitorRecord? {
        slotByIdentifier[identifier].flatMap { slots[$0]?.record }
    }

    /// How many conditions are satisfied now, without building the sorted list of records.
    public var satisfiedCount: Int {
        var n = 0
        for slot in watched where slots[Int(slot)]?.record.state == .satisfied { n += 1 }
        return n
    }

    /// The identifiers of the conditions that are satisfied now.
    public var satisfiedIdentifiers: [String] {
        watched.compactMap { slot in
            slots[Int(slot)].flatMap { $0.record.state == .satisfied ? $0.identifier : nil }
        }
    }

    /// All records, by identifier.
    public var records: [(identifier: String, record: MonitorRecord)] {
        identifiers.map { ($0, slots[slotByIdentifier[$0]!]!.record) }
    }

    // MARK: Conditions

    /// Adds a condition, or replaces the one with that identifier. A replaced condition keeps its state
    /// and is evaluated afresh on the next fix, so changing a fence's shape never invents an `initial`.
    public mutating func add(_ condition: Condition, identifier: String, assuming state: ConditionState = .unknown) {
        if let slot = slotByIdentifier[identifier] {
            slots[slot]!.record.condition = condition
            slots[slot]!.pending = nil
            index.insert(slot: slot, region: condition.region)
            trackRules(slot, condition.rules)
            updateWatch(slot)
            return
        }
        let slot = newSlot()
        let record = MonitorRecord(condition: condition, state: state, since: nil)
        slots[slot] = Slot(identifier: identifier, record: record)
        slotByIdentifier[identifier] = slot
        index.insert(slot: slot, region: condition.region)
        trackRules(slot, condition.rules)
        updateWatch(slot)
    }

    /// Puts back a record as it was persisted, with its state, its `since` and its last event.
    public mutating func restore(_ record: MonitorRecord, identifier: String) {
        add(record.condition, identifier: identifier, assuming: record.state)
        let slot = slotByIdentifier[identifier]!
        slots[slot]!.record = record
        updateWatch(slot)
    }

    /// Puts back many persisted records at once (restoring a monitor), indexing them in one build.
    /// Identifiers already present are replaced.
    /// With `refineIndexLater` the index holds only the regions' boxes until `adoptIndexRefinement(_:)`:
    /// the same answers, sooner (see `SpatialIndex.insertAll(regions:floor:refineLater:)`).
    public mutating func restore(
        contentsOf records: [(identifier: String, record: MonitorRecord)], indexFloor: Int? = nil,
        refineIndexLater: Bool = false
    ) {
        restore(contentsOf: [records], indexFloor: indexFloor, refineIndexLater: refineIndexLater)
    }

    /// The same, from several parts, without joining them first. The store, which reads and decodes them on
    /// several threads, uses `Restoration` itself.
    public mutating func restore(
        contentsOf parts: [[(identifier: String, record: MonitorRecord)]], indexFloor: Int? = nil,
        refineIndexLater: Bool = false
    ) {
        var restoration = Restoration(taking: &self, expecting: parts.reduce(0) { $0 + $1.count })
        for records in parts {
            var ready = RestoredRecords(capacity: records.count)
            for (identifier, record) in records { ready.append(identifier: identifier, record: record) }
            restoration.add(consume ready)
        }
        self = restoration.finish(indexFloor: indexFloor, refineIndexLater: refineIndexLater)
    }

    /// Makes room for `count` more conditions in the slot tables and the lookup table, which would otherwise
    /// grow by doubling (each time hashing every identifier again).
    mutating func reserveCapacity(forMore count: Int) {
        let total = slots.count + count
        slots.reserveCapacity(total)
        status.reserveCapacity(total)
        watchedPosition.reserveCapacity(total)
        stamps.reserveCapacity(total)
        slotByIdentifier.reserveCapacity(slotByIdentifier.count + count)
    }

    /// Puts a restored slot in place (leaving `entry` nil), replacing the condition with its identifier if
    /// there is one; returns its slot and the slot it replaced. Its region is for the caller to index. Moves
    /// what it is given: retaining the objects of 100,000 records decoded on other cores is a cache miss each.
    mutating func putRestored(_ entry: inout Slot?, key: consuming String) -> (slot: Int, replaced: Int?) {
        let slot = newSlot()
        let replaced = slotByIdentifier.updateValue(slot, forKey: key)
        if let replaced { clear(replaced) }
        swap(&slots[slot], &entry)
        if slots.withUnsafeBufferPointer({ $0.baseAddress![slot]?.record.condition.hasRules == true }) {
            trackRules(slot, slots[slot]!.record.condition.rules)
        }
        updateWatch(slot)
        return (slot, replaced)
    }

    /// Whether the index waits for its octagons and masks (restored with `refineIndexLater`).
    public var indexNeedsRefinement: Bool { index.needsRefinement }

    /// The work that makes the octagons and masks the index waits for, or nil when it waits for none. It
    /// holds a copy of the index alone, not of the conditions: run it on any thread while this engine
    /// goes on taking fixes, then `adoptIndexRefinement(_:)`.
    public func indexRefinementWork() -> (@Sendable () -> SpatialIndex.Refinement?)? {
        guard index.needsRefinement else { return nil }
        let index = self.index
        return { index.refinement() }
    }

    /// Puts a refinement in the index; false when a condition was added or removed since it was worked out
    /// (work out another), or when none is needed.
    @discardableResult
    public mutating func adoptIndexRefinement(_ refinement: SpatialIndex.Refinement) -> Bool {
        index.adopt(refinement)
    }

    /// The spatial index's chosen floor, to save with the conditions (see `restore(contentsOf:indexFloor:)`).
    public var indexFloor: Int { index.floorLevel }

    /// Puts back the last accepted fix, so that ordering and speed checks continue across a restart.
    public mutating func restoreLastAcceptedFix(_ fix: Location?) {
        filter = FixFilter(configuration: configuration, lastAccepted: fix)
    }

    public mutating func remove(_ identifier: String) {
        guard let slot = slotByIdentifier.removeValue(forKey: identifier) else { return }
        clear(slot)
    }

    /// Empties a slot whose identifier no longer leads to it, and frees it.
    private mutating func clear(_ slot: Int) {
        trackRules(slot, ConditionRules())
        unwatch(slot)
        index.remove(slot: slot)
        slots[slot] = nil
        status[slot] = SlotStatus()
        freeSlots.append(slot)
    }

    /// A free slot, reused or appended.
    private mutating func newSlot() -> Int {
        if let free = freeSlots.popLast() { return free }
        slots.append(nil)
        status.append(SlotStatus())
        watchedPosition.append(-1)
        stamps.append(0)
        return slots.count - 1
    }

    /// Brings the slot's status in step with it, and watches it exactly while it is not a plain
    /// `unsatisfied`. Called after every change to a slot.
    mutating func updateWatch(_ slot: Int) {
        // Read in place: `slots[slot]!.record` would copy the slot first, retaining each of its references.
        let facts = slots.withUnsafeBufferPointer { Self.watchFacts($0.baseAddress! + slot) }
        guard let (state, waiting, stay) = facts else {
            status[slot] = SlotStatus()
            return unwatch(slot)
        }
        status[slot].state = state
        status[slot].waiting = waiting
        status[slot].staySince = stay?.since ?? 0
        status[slot].dwell = stay?.dwell ?? .infinity
        if state != .unsatisfied || waiting { watch(slot) } else { unwatch(slot) }
    }

    /// What `updateWatch` needs of a slot: its state, whether a transition waits, and the stay a dwell event
    /// is due after (seconds since the reference date, and the dwell); nil for an empty slot.
    private static func watchFacts(
        _ entry: UnsafePointer<Slot?>
    ) -> (state: ConditionState, waiting: Bool, stay: (since: Double, dwell: Double)?)? {
        guard let state = entry.pointee?.record.state, let waiting = entry.pointee?.isPending else { return nil }
        guard state == .satisfied, entry.pointee?.record.dwellReported == false,
            let dwell = entry.pointee?.record.condition.dwell, dwell > 0, let since = entry.pointee?.record.since
        else { return (state, waiting, nil) }
        return (state, waiting, (since.timeIntervalSinceReferenceDate, dwell))
    }

    private mutating func watch(_ slot: Int) {
        guard watchedPosition[slot] < 0 else { return }
        watchedPosition[slot] = Int32(watched.count)
        watched.append(Int32(slot))
    }

    private mutating func unwatch(_ slot: Int) {
        let position = Int(watchedPosition[slot])
        guard position >= 0 else { return }
        let last = watched.removeLast()
        if position < watched.count {
            watched[position] = last
            watchedPosition[Int(last)] = Int32(position)
        }
        watchedPosition[slot] = -1
    }

    // MARK: Fixes

    /// Offers a fix: filters it, then updates every condition it decides and returns the events.
    public mutating func process(_ fix: Location) -> FixOutcome {
        let previous = filter.excursionSinceAccepted ? nil : filter.lastPosition
        expiredIdentifiers.removeAll()
        if let rejection = filter.admit(fix) { return .rejected(rejection) }
        stamp &+= 1
        if stamp == 0 {
            for i in stamps.indices { stamps[i] = 0 }
            for i in status.indices { status[i].changedAt = 0 }
            stamp = 1
        }
        var events: [MonitorEvent] = []
        expire(at: fix, &events)
        updateSchedules(fix, &events)
        if var evidence = evidence(for: fix) {
            decideAll(&evidence, fix, &events)
            if !evidence.atRest, let previous {
                reportCrossings(from: previous, to: fix, &evidence, &events)
            }
        }
        reportDwells(fix, &events)
        reportOverspeed(fix, &events)
        silenceInactive(&events)
        if events.count > 1 { events.sort { $0.identifier < $1.identifier } }
        return .accepted(events)
    }

    /// The fix itself while the vehicle moves; the rest's mean while it is stationary; nil while the
    /// first fixes do not yet show which.
    private mutating func evidence(for fix: Location) -> Evidence? {
        guard configuration.restAveraging else {
            return Evidence(coordinate: fix.coordinate, margin: rule.margin(forAccuracy: fix.horizontalAccuracy))
        }
        rest.update(fix, accuracy: configuration.usableAccuracy(fix.horizontalAccuracy))
        switch rest.motion {
        case .unknown:
            return nil
        case .moving:
            return Evidence(coordinate: fix.coordinate, margin: rule.margin(forAccuracy: fix.horizontalAccuracy))
        case .stationary:
            let estimate = rest.rest!
            return Evidence(coordinate: estimate.mean, margin: rule.margin(for: estimate), rest: estimate)
        }
    }
}

/// A monitor's present in a form whose size does not grow with its conditions: counts, and the
/// satisfied and unknown conditions up to a limit. Built from the watched slots only (satisfied, unknown
/// or waiting), so it costs nothing per plain unsatisfied condition.
public struct MonitorSummary: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        public var identifier: String
        public var since: Date?

        public init(identifier: String, since: Date?) {
            self.identifier = identifier
            self.since = since
        }
    }
    public var name: String
    public var conditions: Int
    public var satisfiedCount: Int
    public var unknownCount: Int
    /// Satisfied conditions, at most the limit asked for, by identifier.
    public var satisfied: [Entry]
    /// Unknown conditions, at most the limit asked for, by identifier.
    public var unknown: [Entry]
    public var unsatisfiedCount: Int { conditions - satisfiedCount - unknownCount }

    public init(
        name: String, conditions: Int, satisfiedCount: Int, unknownCount: Int, satisfied: [Entry], unknown: [Entry]
    ) {
        self.name = name
        self.conditions = conditions
        self.satisfiedCount = satisfiedCount
        self.unknownCount = unknownCount
        self.satisfied = satisfied
        self.unknown = unknown
    }
}

extension MonitorEngine {
    /// The summary, listing at most `limit` satisfied and `limit` unknown conditions (when there are
    /// more, which ones are listed is unspecified; the counts are exact).
    public func summary(listing limit: Int) -> MonitorSummary {
        var satisfied: [MonitorSummary.Entry] = []
        var unknown: [MonitorSummary.Entry] = []
        var satisfiedCount = 0
        var unknownCount = 0
        for slot in watched {
            guard let entry = slots[Int(slot)] else { continue }
            switch entry.record.state {
            case .satisfied:
                satisfiedCount += 1
                if satisfied.count < limit {
                    satisfied.append(.init(identifier: entry.identifier, since: entry.record.since))
                }
            case .unknown:
                unknownCount += 1
                if unknown.count < limit {
                    unknown.append(.init(identifier: entry.identifier, since: entry.record.since))
                }
            case .unsatisfied:
                break
            }
        }
        return MonitorSummary(
            name: name, conditions: count, satisfiedCount: satisfiedCount, unknownCount: unknownCount,
            satisfied: satisfied.sorted { $0.identifier < $1.identifier },
            unknown: unknown.sorted { $0.identifier < $1.identifier })
    }
}
