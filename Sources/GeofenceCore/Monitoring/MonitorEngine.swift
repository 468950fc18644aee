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
/// A fix changes a condition's state only when the decision is confident: inside by more than the
/// margin makes it satisfied, outside by more than the margin makes it unsatisfied, anything in between
/// leaves it as it was. Only conditions whose box holds the fix, and the few that are satisfied or still
/// unknown, are evaluated: every other condition is unsatisfied and stays so.
public struct MonitorEngine: Sendable {
    public let name: String
    public private(set) var configuration: MonitorConfiguration
    private var filter: FixFilter

    private struct Slot: Sendable {
        var identifier: String
        var record: MonitorRecord
    }

    private var slots: [Slot?] = []
    private var slotByIdentifier: [String: Int] = [:]
    private var freeSlots: [Int] = []
    private var index = SpatialIndex()
    /// Slots whose state is not `unsatisfied`: they must be looked at on every fix.
    private var watched: [Int32] = []
    private var watchedPosition: [Int32] = []
    private var stamps: [UInt32] = []
    private var stamp: UInt32 = 0
    /// Reused for each fix's index candidates, so that evaluating a fix allocates nothing for them.
    private var scratch: [Int] = []

    public init(name: String, configuration: MonitorConfiguration = MonitorConfiguration()) {
        self.name = name
        self.configuration = configuration
        filter = FixFilter(configuration: configuration)
    }

    /// The last fix that was accepted.
    public var lastAcceptedFix: Location? { filter.lastAccepted }

    public var identifiers: [String] { slotByIdentifier.keys.sorted() }
    public var count: Int { slotByIdentifier.count }

    public func record(for identifier: String) -> MonitorRecord? {
        slotByIdentifier[identifier].flatMap { slots[$0]?.record }
    }

    /// How many conditions are satisfied now, without building the sorted list of records.
    public var satisfiedCount: Int {
        var n = 0
        for case let slot? in slots where slot.record.state == .satisfied { n += 1 }
        return n
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
            var record = slots[slot]!.record
            record.condition = condition
            slots[slot]!.record = record
            index.insert(slot: slot, box: condition.region.boundingBox)
            return
        }
        let slot = newSlot()
        let record = MonitorRecord(condition: condition, state: state, since: nil)
        slots[slot] = Slot(identifier: identifier, record: record)
        slotByIdentifier[identifier] = slot
        index.insert(slot: slot, box: condition.region.boundingBox)
        if state != .unsatisfied { watch(slot) }
    }

    /// Puts back a record as it was persisted, with its state, its `since` and its last event.
    public mutating func restore(_ record: MonitorRecord, identifier: String) {
        add(record.condition, identifier: identifier, assuming: record.state)
        let slot = slotByIdentifier[identifier]!
        slots[slot]!.record = record
        if record.state == .unsatisfied { unwatch(slot) } else { watch(slot) }
    }

    /// Puts back many persisted records at once (restoring a monitor), indexing them in one build.
    /// Identifiers already present are replaced.
    public mutating func restore(contentsOf records: [(identifier: String, record: MonitorRecord)], indexFloor: Int? = nil) {
        restore(contentsOf: [records], indexFloor: indexFloor)
    }

    /// The same, from several parts (decoded in parallel), without joining them first.
    public mutating func restore(contentsOf parts: [[(identifier: String, record: MonitorRecord)]], indexFloor: Int? = nil) {
        let total = parts.reduce(0) { $0 + $1.count }
        slots.reserveCapacity(slots.count + total)
        slotByIdentifier.reserveCapacity(slotByIdentifier.count + total)
        watchedPosition.reserveCapacity(watchedPosition.count + total)
        stamps.reserveCapacity(stamps.count + total)
        var boxes: [(slot: Int, box: BoundingBox)] = []
        boxes.reserveCapacity(total)
        for records in parts {
            for (identifier, record) in records {
                if slotByIdentifier[identifier] != nil { remove(identifier) }
                let slot = newSlot()
                slots[slot] = Slot(identifier: identifier, record: record)
                slotByIdentifier[identifier] = slot
                boxes.append((slot, record.condition.region.boundingBox))
                if record.state != .unsatisfied { watch(slot) }
            }
        }
        index.insertAll(boxes, floor: indexFloor)
    }

    /// The spatial index's chosen floor, to save with the conditions (see `restore(contentsOf:indexFloor:)`).
    public var indexFloor: Int { index.floorLevel }

    /// Puts back the last accepted fix, so that ordering and speed checks continue across a restart.
    public mutating func restoreLastAcceptedFix(_ fix: Location?) {
        filter = FixFilter(configuration: configuration, lastAccepted: fix)
    }

    public mutating func remove(_ identifier: String) {
        guard let slot = slotByIdentifier.removeValue(forKey: identifier) else { return }
        unwatch(slot)
        index.remove(slot: slot)
        slots[slot] = nil
        freeSlots.append(slot)
    }

    /// A free slot, reused or appended.
    private mutating func newSlot() -> Int {
        if let free = freeSlots.popLast() { return free }
        slots.append(nil)
        watchedPosition.append(-1)
        stamps.append(0)
        return slots.count - 1
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
        let previous = filter.lastAccepted
        if let rejection = filter.admit(fix) { return .rejected(rejection) }
        let point = PreparedPoint(fix.coordinate)
        let margin = configuration.margin(forAccuracy: fix.horizontalAccuracy)
        stamp &+= 1
        if stamp == 0 { for i in stamps.indices { stamps[i] = 0 }; stamp = 1 }
        var events: [MonitorEvent] = []

        // Satisfied and unknown conditions, then unsatisfied ones whose box holds the fix.
        for slot in watched { decide(Int(slot), point, margin, fix, &events) }
        var candidates = takeScratch()
        index.forEachCandidate(longitude: point.longitude, latitude: point.latitude) { candidates.append($0) }
        for slot in candidates { decide(slot, point, margin, fix, &events) }
        scratch = candidates

        reportDwells(fix, &events)
        if let previous { reportCrossings(from: previous, to: fix, point, &events) }
        events.sort { $0.identifier < $1.identifier }
        return .accepted(events)
    }

    /// The candidate buffer, emptied, moved out of `self` so the index can be walked while it fills.
    private mutating func takeScratch() -> [Int] {
        var buffer: [Int] = []
        swap(&buffer, &scratch)
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }

    private mutating func decide(_ slot: Int, _ point: PreparedPoint, _ margin: Double, _ fix: Location, _ events: inout [MonitorEvent]) {
        guard stamps[slot] != stamp else { return }
        stamps[slot] = stamp
        guard var entry = slots[slot] else { return }
        let containment = entry.record.condition.region.classify(point, margin: margin)
        let kind: EventKind
        let state: ConditionState
        switch (entry.record.state, containment) {
        case (.unknown, .inside): (kind, state) = (.initial, .satisfied)
        case (.unknown, .outside): (kind, state) = (.initial, .unsatisfied)
        case (.unsatisfied, .inside): (kind, state) = (.enter, .satisfied)
        case (.satisfied, .outside): (kind, state) = (.exit, .unsatisfied)
        default: return
        }
        let event = MonitorEvent(
            identifier: entry.identifier, kind: kind, state: state, date: fix.timestamp, location: fix,
            conditionName: entry.record.condition.name)
        entry.record.state = state
        entry.record.since = fix.timestamp
        entry.record.lastEvent = event
        entry.record.dwellReported = false
        slots[slot] = entry
        if state == .satisfied { watch(slot) } else { unwatch(slot) }
        events.append(event)
    }

    private mutating func reportDwells(_ fix: Location, _ events: inout [MonitorEvent]) {
        for slot in watched {
            let s = Int(slot)
            guard var entry = slots[s], entry.record.state == .satisfied, !entry.record.dwellReported,
                  let dwell = entry.record.condition.dwell, dwell > 0, let since = entry.record.since,
                  fix.timestamp.timeIntervalSince(since) >= dwell else { continue }
            let event = MonitorEvent(
                identifier: entry.identifier, kind: .dwell, state: .satisfied, date: fix.timestamp, location: fix,
                conditionName: entry.record.condition.name)
            entry.record.dwellReported = true
            entry.record.lastEvent = event
            slots[s] = entry
            events.append(event)
        }
    }

    private mutating func reportCrossings(from previous: Location, to fix: Location, _ point: PreparedPoint, _ events: inout [MonitorEvent]) {
        guard fix.timestamp.timeIntervalSince(previous.timestamp) <= configuration.crossingMaximumInterval,
              Geodesic.distance(previous.coordinate, fix.coordinate) <= configuration.crossingMaximumDistance
        else { return }
        let before = PreparedPoint(previous.coordinate)
        var candidates = takeScratch()
        defer { scratch = candidates }
        index.forEachCandidate(alongSegmentFrom: previous.coordinate, to: fix.coordinate) { candidates.append($0) }
        for slot in candidates {
            // A condition that changed state on this fix has its own event.
            guard stamps[slot] != stamp || slots[slot]?.record.lastEvent?.date != fix.timestamp,
                  var entry = slots[slot], entry.record.state == .unsatisfied else { continue }
            let region = entry.record.condition.region
            guard !region.contains(before), !region.contains(point),
                  region.intersectsSegment(from: previous.coordinate, to: fix.coordinate) else { continue }
            let event = MonitorEvent(
                identifier: entry.identifier, kind: .crossed, state: .unsatisfied, date: fix.timestamp, location: fix,
                conditionName: entry.record.condition.name)
            entry.record.lastEvent = event
            slots[slot] = entry
            events.append(event)
        }
    }
}
