import Foundation

extension MonitorEngine {
    /// Decides every condition the evidence may change: those the index offers for its point, and the
    /// watched ones (satisfied, unknown, waiting).
    mutating func decideAll(_ evidence: inout Evidence, _ fix: Location, _ events: inout [MonitorEvent]) {
        var candidates = takeScratch()
        // A slot the index says surely holds the point is stored complemented (negative).
        index.forEachCandidate(longitude: evidence.coordinate.longitude, latitude: evidence.coordinate.latitude) {
            slot, surelyInside in
            candidates.append(surelyInside ? ~slot : slot)
        }
        for candidate in candidates {
            let slot = candidate < 0 ? ~candidate : candidate
            // Satisfied with the point surely inside: only "outside by the margin" could change it, so no
            // exact test is needed.
            if candidate < 0, status[slot].state == .satisfied, !status[slot].waiting {
                stamps[slot] = stamp
                continue
            }
            decide(slot, &evidence, fix, &events)
        }
        scratch = candidates
        for slot in watched { decide(Int(slot), &evidence, fix, &events) }
    }

    /// The candidate buffer, emptied, moved out of `self` so the index can be walked while it fills.
    mutating func takeScratch() -> [Int] {
        var buffer: [Int] = []
        swap(&buffer, &scratch)
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }

    /// A slot's region, read in place rather than through a copy of the whole slot.
    @inline(__always)
    func region(_ slot: Int) -> Region? {
        slots.withUnsafeBufferPointer { $0[slot]?.record.condition.region }
    }

    private mutating func decide(
        _ slot: Int, _ evidence: inout Evidence, _ fix: Location, _ events: inout [MonitorEvent]
    ) {
        guard stamps[slot] != stamp else { return }
        stamps[slot] = stamp
        guard let region = region(slot) else { return }
        let verdict: ConditionState?
        switch region.classify(evidence.point(), margin: evidence.margin) {
        case .inside: verdict = .satisfied
        case .outside: verdict = .unsatisfied
        case .uncertain: verdict = nil
        }
        settle(slot, verdict, evidence, fix, &events)
    }

    /// The seconds a slot's new side must hold before its transition is published.
    private func hold(_ slot: Int) -> Double {
        slots[slot]?.record.condition.minimumDuration ?? configuration.minimumDuration
    }

    /// Turns a slot's confident verdict (nil: uncertain) into a state change, a pending one, or nothing.
    private mutating func settle(
        _ slot: Int, _ verdict: ConditionState?, _ evidence: Evidence, _ fix: Location, _ events: inout [MonitorEvent]
    ) {
        let current = status[slot].state
        let waiting = status[slot].waiting
        switch verdict {
        case current?:
            // The old side again: a waiting transition did not hold.
            if waiting {
                slots[slot]!.pending = nil
                updateWatch(slot)
            }
        case let state? where current == .unknown:
            commit(slot, .initial, state, at: evidence.location(fix), &events)
        case let state?:
            let kind: EventKind = state == .satisfied ? .enter : .exit
            let hold = hold(slot)
            if hold <= 0 { return commit(slot, kind, state, at: evidence.location(fix), &events) }
            if slots[slot]!.pending?.state != state {
                slots[slot]!.pending = PendingTransition(kind: kind, state: state, location: evidence.location(fix))
                updateWatch(slot)
            }
            commitIfHeld(slot, hold, fix, &events)
        case nil:
            if waiting { commitIfHeld(slot, hold(slot), fix, &events) }
        }
    }

    private mutating func commitIfHeld(_ slot: Int, _ hold: Double, _ fix: Location, _ events: inout [MonitorEvent]) {
        guard let pending = slots[slot]?.pending, fix.timestamp.timeIntervalSince(pending.location.timestamp) >= hold
        else { return }
        commit(slot, pending.kind, pending.state, at: pending.location, &events)
    }

    /// The change happens, dated at the evidence that first made it confident.
    private mutating func commit(
        _ slot: Int, _ kind: EventKind, _ state: ConditionState, at location: Location, _ events: inout [MonitorEvent]
    ) {
        var entry = slots[slot]!
        let event = MonitorEvent(
            identifier: entry.identifier, kind: kind, state: state, date: location.timestamp,
            location: location, conditionName: entry.record.condition.name,
            isNotified: entry.record.condition.rules.notifies(kind))
        entry.record.state = state
        entry.record.since = location.timestamp
        entry.record.lastEvent = event
        entry.record.dwellReported = false
        entry.pending = nil
        slots[slot] = entry
        status[slot].changedAt = stamp
        updateWatch(slot)
        events.append(event)
    }

    mutating func reportDwells(_ fix: Location, _ events: inout [MonitorEvent]) {
        let now = fix.timestamp.timeIntervalSinceReferenceDate
        for slot in watched {
            let s = Int(slot)
            // The status says when a dwell is due, so the slot itself is read only for one that is.
            guard now - status[s].staySince >= status[s].dwell, var entry = slots[s] else { continue }
            let event = MonitorEvent(
                identifier: entry.identifier, kind: .dwell, state: .satisfied, date: fix.timestamp, location: fix,
                conditionName: entry.record.condition.name, isNotified: entry.record.condition.rules.notifies(.dwell))
            entry.record.dwellReported = true
            entry.record.lastEvent = event
            slots[s] = entry
            updateWatch(s)
            events.append(event)
        }
    }

    /// `crossed` for unsatisfied conditions that the straight path between two moving fixes passed through.
    mutating func reportCrossings(
        from previous: (coordinate: Coordinate, timestamp: Date), to fix: Location, _ current: inout Evidence,
        _ events: inout [MonitorEvent]
    ) {
        guard fix.timestamp.timeIntervalSince(previous.timestamp) <= configuration.crossingMaximumInterval else {
            return
        }
        var candidates = takeScratch()
        defer { scratch = candidates }
        index.forEachCandidate(alongSegmentFrom: previous.coordinate, to: fix.coordinate) { candidates.append($0) }
        // Most paths meet no condition's region; a bound from the degrees settles the distance for almost all
        // others.
        let limit = configuration.crossingMaximumDistance
        guard !candidates.isEmpty,
            Geodesic.upperBound(degreesBetween: previous.coordinate, fix.coordinate) <= limit
                || Geodesic.distance(previous.coordinate, fix.coordinate) <= limit
        else { return }
        var before: PreparedPoint?
        for slot in candidates {
            // A condition that changed state on this fix has its own event; one waiting to change is not
            // merely passed by.
            let st = status[slot]
            guard st.changedAt != stamp, st.state == .unsatisfied, !st.waiting, let region = region(slot) else {
                continue
            }
            let start = before ?? PreparedPoint(previous.coordinate)
            before = start
            guard !region.contains(start), !region.contains(current.point()),
                region.intersectsSegment(from: previous.coordinate, to: fix.coordinate),
                var entry = slots[slot]
            else { continue }
            let event = MonitorEvent(
                identifier: entry.identifier, kind: .crossed, state: .unsatisfied, date: fix.timestamp, location: fix,
                conditionName: entry.record.condition.name, isNotified: entry.record.condition.rules.notifies(.crossed))
            entry.record.lastEvent = event
            slots[slot] = entry
            events.append(event)
        }
    }
}
