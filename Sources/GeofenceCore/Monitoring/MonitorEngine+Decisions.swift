import Foundation

extension MonitorEngine {
    /// Decides every condition the evidence may change: those the index offers for its point, and the
    /// watched ones (satisfied, unknown, waiting).
    mutating func decideAll(_ evidence: Evidence, _ fix: Location, _ events: inout [MonitorEvent]) {
        var candidates = takeScratch()
        // A slot the index says surely holds the point is stored complemented (negative).
        index.forEachCandidate(longitude: evidence.point.longitude, latitude: evidence.point.latitude) { slot, surelyInside in
            candidates.append(surelyInside ? ~slot : slot)
        }
        for candidate in candidates {
            let slot = candidate < 0 ? ~candidate : candidate
            // Satisfied with the point surely inside: only "outside by the margin" could change it, so no
            // exact test is needed.
            if candidate < 0, let entry = slots[slot], entry.record.state == .satisfied, entry.pending == nil {
                stamps[slot] = stamp
                continue
            }
            decide(slot, evidence, fix, &events)
        }
        scratch = candidates
        for slot in watched { decide(Int(slot), evidence, fix, &events) }
    }

    /// The candidate buffer, emptied, moved out of `self` so the index can be walked while it fills.
    mutating func takeScratch() -> [Int] {
        var buffer: [Int] = []
        swap(&buffer, &scratch)
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }

    private mutating func decide(_ slot: Int, _ evidence: Evidence, _ fix: Location, _ events: inout [MonitorEvent]) {
        guard stamps[slot] != stamp else { return }
        stamps[slot] = stamp
        guard let entry = slots[slot] else { return }
        let verdict: ConditionState?
        switch entry.record.condition.region.classify(evidence.point, margin: evidence.margin) {
        case .inside: verdict = .satisfied
        case .outside: verdict = .unsatisfied
        case .uncertain: verdict = nil
        }
        settle(slot, verdict, evidence.restLocation ?? fix, fix, &events)
    }

    /// Turns a slot's confident verdict (nil: uncertain) into a state change, a pending one, or nothing.
    private mutating func settle(_ slot: Int, _ verdict: ConditionState?, _ evidence: Location, _ fix: Location, _ events: inout [MonitorEvent]) {
        guard let entry = slots[slot] else { return }
        let current = entry.record.state
        let hold = entry.record.condition.minimumDuration ?? configuration.minimumDuration
        switch verdict {
        case current?:
            // The old side again: a waiting transition did not hold.
            if entry.pending != nil {
                slots[slot]!.pending = nil
                updateWatch(slot)
            }
        case let state? where current == .unknown:
            commit(slot, .initial, state, at: evidence, &events)
        case let state?:
            let kind: EventKind = state == .satisfied ? .enter : .exit
            if hold <= 0 { return commit(slot, kind, state, at: evidence, &events) }
            if entry.pending?.state != state {
                slots[slot]!.pending = PendingTransition(kind: kind, state: state, location: evidence)
                updateWatch(slot)
            }
            commitIfHeld(slot, hold, fix, &events)
        case nil:
            commitIfHeld(slot, hold, fix, &events)
        }
    }

    private mutating func commitIfHeld(_ slot: Int, _ hold: Double, _ fix: Location, _ events: inout [MonitorEvent]) {
        guard let pending = slots[slot]?.pending, fix.timestamp.timeIntervalSince(pending.location.timestamp) >= hold else { return }
        commit(slot, pending.kind, pending.state, at: pending.location, &events)
    }

    /// The change happens, dated at the evidence that first made it confident.
    private mutating func commit(_ slot: Int, _ kind: EventKind, _ state: ConditionState, at location: Location, _ events: inout [MonitorEvent]) {
        var entry = slots[slot]!
        let event = MonitorEvent(identifier: entry.identifier, kind: kind, state: state, date: location.timestamp,
                                 location: location, conditionName: entry.record.condition.name)
        entry.record.state = state
        entry.record.since = location.timestamp
        entry.record.lastEvent = event
        entry.record.dwellReported = false
        entry.pending = nil
        entry.changedAt = stamp
        slots[slot] = entry
        updateWatch(slot)
        events.append(event)
    }

    mutating func reportDwells(_ fix: Location, _ events: inout [MonitorEvent]) {
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

    /// `crossed` for unsatisfied conditions that the straight path between two moving fixes passed through.
    mutating func reportCrossings(from previous: (fix: Location, point: PreparedPoint), to current: (fix: Location, point: PreparedPoint),
                                  _ events: inout [MonitorEvent]) {
        let fix = current.fix
        guard fix.timestamp.timeIntervalSince(previous.fix.timestamp) <= configuration.crossingMaximumInterval else { return }
        var candidates = takeScratch()
        defer { scratch = candidates }
        index.forEachCandidate(alongSegmentFrom: previous.fix.coordinate, to: fix.coordinate) { candidates.append($0) }
        // Most paths meet no condition's box; the chord settles the distance for almost all others.
        let limit = configuration.crossingMaximumDistance
        guard !candidates.isEmpty, Geodesic.upperBound(chordBetween: previous.point, current.point) <= limit
                || Geodesic.distance(previous.fix.coordinate, fix.coordinate) <= limit else { return }
        let before = previous.point, after = current.point
        for slot in candidates {
            // A condition that changed state on this fix has its own event; one waiting to change is not
            // merely passed by.
            guard var entry = slots[slot], entry.changedAt != stamp, entry.record.state == .unsatisfied,
                  entry.pending == nil else { continue }
            let region = entry.record.condition.region
            guard !region.contains(before), !region.contains(after),
                  region.intersectsSegment(from: previous.fix.coordinate, to: fix.coordinate) else { continue }
            let event = MonitorEvent(
                identifier: entry.identifier, kind: .crossed, state: .unsatisfied, date: fix.timestamp, location: fix,
                conditionName: entry.record.condition.name)
            entry.record.lastEvent = event
            slots[slot] = entry
            events.append(event)
        }
    }
}
