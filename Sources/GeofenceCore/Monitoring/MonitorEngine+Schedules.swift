import Foundation

extension MonitorEngine {
    /// Where a scheduled condition's schedule stood at the last fix, and the minute it was judged in
    /// (windows are whole minutes and RRULE hours, so a schedule can change only at a new minute).
    struct ScheduleState: Sendable {
        var active: Bool
        var minute: Int
    }

    /// Notes (or forgets) a slot's schedule; its activity is judged at the next fix.
    mutating func trackSchedule(_ slot: Int, _ schedule: Schedule?) {
        if schedule == nil {
            scheduleStates.removeValue(forKey: slot)
            scheduledSlots.remove(slot)
        } else {
            scheduledSlots.insert(slot)
            unjudgedSchedules.insert(slot)
        }
    }

    /// Whether the slot's schedule has it closed now.
    func isInactive(_ slot: Int) -> Bool {
        scheduleStates[slot]?.active == false
    }

    /// `active` when a schedule opens (with the state it finds: a vehicle already inside is `satisfied`)
    /// and `inactive` when it closes. The first judgement after a condition arrives, or after a restart,
    /// sets the schedule's side without an event.
    mutating func updateSchedules(_ fix: Location, _ events: inout [MonitorEvent]) {
        guard !scheduledSlots.isEmpty else { return }
        let minute = Int((fix.timestamp.timeIntervalSince1970 / 60).rounded(.down))
        // Within a minute only newly added schedules need judging; every schedule once a minute.
        let due = minute != scheduleMinute ? scheduledSlots : unjudgedSchedules
        scheduleMinute = minute
        unjudgedSchedules.removeAll()
        for slot in due.sorted() {
            guard scheduleStates[slot]?.minute != minute, let entry = slots[slot],
                let schedule = entry.record.condition.rules.schedule
            else { continue }
            let active = schedule.isActive(at: fix.timestamp)
            let before = scheduleStates[slot]?.active
            scheduleStates[slot] = ScheduleState(active: active, minute: minute)
            guard let before, before != active else { continue }
            let kind: EventKind = active ? .active : .inactive
            events.append(
                MonitorEvent(
                    identifier: entry.identifier, kind: kind, state: entry.record.state, date: fix.timestamp,
                    location: fix,
                    conditionName: entry.record.condition.name, isNotified: entry.record.condition.rules.notifies(kind))
            )
        }
    }

    /// Transitions of a condition whose schedule is closed are tracked but not published.
    func silenceInactive(_ events: inout [MonitorEvent]) {
        guard !scheduleStates.isEmpty else { return }
        for i in events.indices where events[i].kind != .active && events[i].kind != .inactive && events[i].isNotified {
            if let slot = slot(of: events[i].identifier), isInactive(slot) { events[i].isNotified = false }
        }
    }
}
