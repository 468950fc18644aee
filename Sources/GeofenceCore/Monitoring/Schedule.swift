import Foundation

/// When a condition is active: weekly windows of local wall time in an IANA time zone, and optionally an
/// iCalendar RRULE subset. Outside them the condition is inactive: its state is still tracked, but no
/// transition is published (docs/conditions.md).
public struct Schedule: Sendable, Equatable {
    /// A weekday, Monday first.
    public enum Weekday: Int, Sendable, CaseIterable, Comparable {
        case monday, tuesday, wednesday, thursday, friday, saturday, sunday
        public static func < (a: Weekday, b: Weekday) -> Bool { a.rawValue < b.rawValue }
        /// The three-letter name of `properties.schedule.windows[].days`.
        public var shortName: String { ["mon", "tue", "wed", "thu", "fri", "sat", "sun"][rawValue] }
        /// The two-letter name of an RRULE's BYDAY.
        public var icalendarName: String { ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][rawValue] }
    }

    /// Active from `from` to `to` (minutes after local midnight; `to` up to 1440) on each of `days`, in
    /// local wall time. A window with `to` ≤ `from` crosses midnight and ends the next day.
    public struct Window: Sendable, Equatable {
        public var days: Set<Weekday>
        public var from: Int
        public var to: Int
        public init(days: Set<Weekday>, from: Int, to: Int) {
            self.days = days
            self.from = from
            self.to = to
        }
    }

    /// The RRULE subset: FREQ=DAILY or WEEKLY, active in the listed hours (all when none) of the listed
    /// days (all when none), until `until`.
    public struct Recurrence: Sendable, Equatable {
        public var days: Set<Weekday>?
        public var hours: Set<Int>?
        public var until: Date?
        /// The rule as written, kept for the store and `conditions show`.
        public var text: String
    }

    public var timeZone: TimeZone
    public var windows: [Window]
    public var recurrence: Recurrence?

    public init(timeZone: TimeZone, windows: [Window], recurrence: Recurrence? = nil) {
        self.timeZone = timeZone
        self.windows = windows
        self.recurrence = recurrence
    }

    /// Whether the condition is active at an instant.
    public func isActive(at date: Date) -> Bool {
        if let recurrence, recurrence.matches(local(date), at: date) { return true }
        guard !windows.isEmpty else { return false }
        let wall = local(date)
        // A window opened today or (crossing midnight) yesterday.
        for dayBack in 0...1 {
            let day = wall.day - dayBack
            let weekday = Self.weekday(ofDay: day)
            for window in windows where window.days.contains(weekday) {
                let start = Self.instant(day: day, minute: window.from, in: timeZone)
                let end = Self.instant(day: window.to > window.from ? day : day + 1, minute: window.to, in: timeZone)
                if date >= start && date < end { return true }
            }
        }
        return false
    }

    /// Local wall time: days since 1970-01-01 and seconds into that day.
    struct Wall {
        var day: Int
        var second: Int
    }

    func local(_ date: Date) -> Wall {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down)) + timeZone.secondsFromGMT(for: date)
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        return Wall(day: day, second: seconds - day * 86_400)
    }

    static func weekday(ofDay day: Int) -> Weekday {
        Weekday(rawValue: ((day + 3) % 7 + 7) % 7)!  // 1970-01-01 was a Thursday
    }

    /// The first instant at which the local clock shows `minute` of `day` or later: a time the clock
    /// skips (spring forward) opens at the jump; a time it shows twice (fall back) is its first showing.
    static func instant(day: Int, minute: Int, in timeZone: TimeZone) -> Date {
        let wall = Double(day * 86_400 + minute * 60)
        let offsets = Set(
            [-86_400.0, 0, 86_400].map { Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: wall + $0))) })
        let valid = offsets.map { wall - $0 }.filter {
            Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: $0))) == wall - $0
        }
        if let first = valid.min() { return Date(timeIntervalSince1970: first) }
        // Skipped: the jump lies between the candidates; find it to the second.
        var low = offsets.map { wall - $0 }.min()!
        var high = offsets.map { wall - $0 }.max()!
        while high - low > 1 {
            let mid = ((low + high) / 2).rounded(.down)
            let shown = mid + Double(timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: mid)))
            if shown >= wall { high = mid } else { low = mid }
        }
        return Date(timeIntervalSince1970: high)
    }
}

extension Schedule.Recurrence {
    func matches(_ wall: Schedule.Wall, at date: Date) -> Bool {
        if let until, date > until { return false }
        if let days, !days.contains(Schedule.weekday(ofDay: wall.day)) { return false }
        if let hours, !hours.contains(wall.second / 3600) { return false }
        return true
    }
}
