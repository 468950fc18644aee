import Foundation

extension MonitorEngine {
    /// Notes (or forgets) that a slot's condition is a speed zone.
    mutating func trackSpeedZone(_ slot: Int, _ limit: Double?) {
        if limit == nil { speedZoneSlots.remove(slot) } else { speedZoneSlots.insert(slot) }
    }

    /// The speed zone whose limit applies: the lowest limit of the satisfied, open speed zones (ties: the
    /// first identifier). O(speed zones); nothing at all for a monitor without any.
    func applicableSpeedZone() -> OverspeedDetector.Zone? {
        var best: OverspeedDetector.Zone?
        for slot in speedZoneSlots where status[slot].state == .satisfied && !isInactive(slot) {
            guard let entry = slots[slot], let limit = entry.record.condition.rules.speedLimit else { continue }
            if best == nil || limit < best!.limit || (limit == best!.limit && entry.identifier < best!.identifier) {
                best = OverspeedDetector.Zone(
                    identifier: entry.identifier, name: entry.record.condition.name, limit: limit)
            }
        }
        return best
    }

    /// `overspeed` and `overspeedEnded`, on the zone that set the limit.
    mutating func reportOverspeed(_ fix: Location, _ events: inout [MonitorEvent]) {
        guard !speedZoneSlots.isEmpty || overspeed.episode != nil else { return }
        let zone = applicableSpeedZone()
        guard zone != nil || overspeed.episode != nil, let (kind, setBy, detail) = overspeed.update(fix, zone: zone)
        else { return }
        let record = record(for: setBy.identifier)
        events.append(
            MonitorEvent(
                identifier: setBy.identifier, kind: kind, state: record?.state ?? .unsatisfied, date: fix.timestamp,
                location: fix, conditionName: setBy.name, overspeed: detail,
                isNotified: record?.condition.rules.notifies(kind) ?? true))
    }
}
