import Foundation

extension MonitorEngine {
    /// Brings a slot's expiry, schedule and speed-zone tracking in step with its condition's rules (empty
    /// rules: forgets the slot). A condition with no rules, in a monitor with none, costs three lookups
    /// in empty collections.
    mutating func trackRules(_ slot: Int, _ rules: ConditionRules) {
        if rules.expires != nil || expiries[slot] != nil { trackExpiry(slot, rules.expires) }
        if rules.schedule != nil || scheduledSlots.contains(slot) { trackSchedule(slot, rules.schedule) }
        if rules.speedLimit != nil || speedZoneSlots.contains(slot) { trackSpeedZone(slot, rules.speedLimit) }
    }

    /// Notes (or forgets) when a slot's condition expires, keeping the earliest expiry at hand so that a
    /// fix before it costs one comparison.
    mutating func trackExpiry(_ slot: Int, _ expires: Date?) {
        let old = expiries.removeValue(forKey: slot)
        if let expires {
            expiries[slot] = expires
            nextExpiry = min(nextExpiry, expires)
        } else if old == nextExpiry {
            nextExpiry = expiries.values.min() ?? .distantFuture
        }
    }

    /// Removes every condition whose `expires` the fix has reached, in identifier order, with an `exit`
    /// (reason `expired`, dated at the expiry) for one that was satisfied. Their identifiers are left in
    /// `expiredIdentifiers`, for the store to delete with the events.
    mutating func expire(at fix: Location, _ events: inout [MonitorEvent]) {
        guard fix.timestamp >= nextExpiry else { return }
        let due = expiries.filter { $0.value <= fix.timestamp }.compactMap { slot, date in
            slots[slot].map { ($0, date, slot) }
        }
        for (entry, date, slot) in due.sorted(by: { $0.0.identifier < $1.0.identifier }) {
            if entry.record.state == .satisfied {
                events.append(
                    MonitorEvent(
                        identifier: entry.identifier, kind: .exit, state: .unsatisfied, date: date, location: fix,
                        conditionName: entry.record.condition.name, reason: .expired,
                        isNotified: entry.record.condition.rules.notifies(.exit) && !isInactive(slot)))
            }
            remove(entry.identifier)
            expiredIdentifiers.append(entry.identifier)
        }
    }

    /// The `exit` that removing a condition means for a vehicle inside it (reason `removed`), at the last
    /// accepted fix; nil when it is not satisfied. `remove` itself publishes nothing: the agent stores this
    /// event in the same transaction that deletes the condition.
    public func removalExit(_ identifier: String) -> MonitorEvent? {
        guard let slot = slot(of: identifier), let record = slots[slot]?.record, record.state == .satisfied,
            let fix = lastAcceptedFix,
            !isInactive(slot)
        else { return nil }
        return MonitorEvent.removalExit(identifier, condition: record.condition, at: fix)
    }
}
