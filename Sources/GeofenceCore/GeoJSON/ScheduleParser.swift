import Foundation

/// Reads `properties.schedule`. Errors carry the path below it (`windows[0].from`, `timeZone`).
enum ScheduleParser {
    static func parse(_ value: JSONValue) throws(ConditionError) -> Schedule {
        guard case .object(let object) = value else {
            throw ConditionError(path: "", message: "expected an object, found \(value.typeName)")
        }
        for key in object.keys where !["timeZone", "windows", "rrule"].contains(key) {
            throw ConditionError(path: key, message: "unknown key (a schedule has timeZone, windows and rrule)")
        }
        guard case .string(let zoneName)? = object["timeZone"] else {
            throw ConditionError(
                path: "timeZone", message: "expected an IANA time zone name such as \"Europe/Amsterdam\"")
        }
        guard let zone = TimeZone(identifier: zoneName) else {
            throw ConditionError(path: "timeZone", message: "'\(zoneName)' is not an IANA time zone")
        }
        var windows: [Schedule.Window] = []
        switch object["windows"] {
        case nil, .null?: break
        case .array(let items)?:
            for (i, item) in items.enumerated() { windows.append(try window(item, at: "windows[\(i)]")) }
        case let v?: throw ConditionError(path: "windows", message: "expected a list of windows, found \(v.typeName)")
        }
        var recurrence: Schedule.Recurrence?
        switch object["rrule"] {
        case nil, .null?: break
        case .string(let text)?: recurrence = try rrule(text, zone: zone)
        case let v?: throw ConditionError(path: "rrule", message: "expected an RRULE string, found \(v.typeName)")
        }
        guard !windows.isEmpty || recurrence != nil else {
            throw ConditionError(path: "windows", message: "a schedule needs at least one window or an rrule")
        }
        return Schedule(timeZone: zone, windows: windows, recurrence: recurrence)
    }

    static func window(_ value: JSONValue, at path: String) throws(ConditionError) -> Schedule.Window {
        guard case .object(let object) = value else {
            throw ConditionError(path: path, message: "expected a window object, found \(value.typeName)")
        }
        for key in object.keys where !["days", "from", "to"].contains(key) {
            throw ConditionError(path: "\(path).\(key)", message: "unknown key (a window has days, from and to)")
        }
        var days = Set(Schedule.Weekday.allCases)
        switch object["days"] {
        case nil, .null?: break
        case .array(let items)?:
            days = []
            for (i, item) in items.enumerated() {
                guard case .string(let name) = item,
                    let day = Schedule.Weekday.allCases.first(where: { $0.shortName == name.lowercased() })
                else {
                    throw ConditionError(
                        path: "\(path).days[\(i)]", message: "expected one of mon, tue, wed, thu, fri, sat, sun")
                }
                days.insert(day)
            }
            guard !days.isEmpty else {
                throw ConditionError(path: "\(path).days", message: "a window needs at least one day")
            }
        case let v?: throw ConditionError(path: "\(path).days", message: "expected a list of days, found \(v.typeName)")
        }
        let from = try minutes(object["from"], at: "\(path).from", allowMidnightEnd: false)
        let to = try minutes(object["to"], at: "\(path).to", allowMidnightEnd: true)
        guard from != to else {
            throw ConditionError(
                path: "\(path).to",
                message: "a window from and to the same time is empty; use 00:00 to 24:00 for a whole day")
        }
        return Schedule.Window(days: days, from: from, to: to)
    }

    /// "HH:MM" as minutes after midnight; "24:00" only as an end.
    static func minutes(_ value: JSONValue?, at path: String, allowMidnightEnd: Bool) throws(ConditionError) -> Int {
        guard case .string(let text)? = value else {
            throw ConditionError(path: path, message: "expected a time such as \"07:30\"")
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let h = Int(parts[0]), let m = Int(parts[1]),
            (0..<60).contains(m), (0..<24).contains(h) || (allowMidnightEnd && h == 24 && m == 0)
        else {
            throw ConditionError(
                path: path, message: "'\(text)' is not a time from 00:00 to \(allowMidnightEnd ? "24:00" : "23:59")")
        }
        return h * 60 + m
    }

    /// FREQ=DAILY or WEEKLY with BYDAY, BYHOUR and UNTIL; anything else is refused by name.
    static func rrule(_ text: String, zone: TimeZone) throws(ConditionError) -> Schedule.Recurrence {
        var parts: [String: String] = [:]
        for part in text.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, !pair[1].isEmpty else {
                throw ConditionError(path: "rrule", message: "'\(part)' is not NAME=VALUE")
            }
            guard ["FREQ", "BYDAY", "BYHOUR", "UNTIL"].contains(pair[0].uppercased()) else {
                throw ConditionError(
                    path: "rrule", message: "\(pair[0]) is not supported (FREQ, BYDAY, BYHOUR and UNTIL are)")
            }
            parts[pair[0].uppercased()] = pair[1].uppercased()
        }
        guard let freq = parts["FREQ"], freq == "DAILY" || freq == "WEEKLY" else {
            throw ConditionError(path: "rrule", message: "FREQ must be DAILY or WEEKLY")
        }
        var days: Set<Schedule.Weekday>?
        if let list = parts["BYDAY"] {
            var set: Set<Schedule.Weekday> = []
            for name in list.split(separator: ",") {
                guard let day = Schedule.Weekday.allCases.first(where: { $0.icalendarName == name }) else {
                    throw ConditionError(
                        path: "rrule", message: "BYDAY '\(name)' is not one of MO, TU, WE, TH, FR, SA, SU")
                }
                set.insert(day)
            }
            days = set
        }
        guard freq == "DAILY" || days != nil else {
            throw ConditionError(path: "rrule", message: "FREQ=WEEKLY needs BYDAY")
        }
        var hours: Set<Int>?
        if let list = parts["BYHOUR"] {
            var set: Set<Int> = []
            for item in list.split(separator: ",") {
                guard let h = Int(item), (0..<24).contains(h) else {
                    throw ConditionError(path: "rrule", message: "BYHOUR '\(item)' is not an hour from 0 to 23")
                }
                set.insert(h)
            }
            hours = set
        }
        var until: Date?
        if let u = parts["UNTIL"] {
            guard let date = untilDate(u, zone: zone) else {
                throw ConditionError(path: "rrule", message: "UNTIL '\(u)' is not YYYYMMDD or YYYYMMDDTHHMMSSZ")
            }
            until = date
        }
        return Schedule.Recurrence(days: days, hours: hours, until: until, text: text)
    }

    /// UNTIL as a UTC time (…Z), or a date: to the end of that day in the schedule's zone.
    static func untilDate(_ text: String, zone: TimeZone) -> Date? {
        let b = Array(text)
        func number(_ r: Range<Int>) -> Int? { r.upperBound <= b.count ? Int(String(b[r])) : nil }
        guard let y = number(0..<4), let mo = number(4..<6), let d = number(6..<8), (1...12).contains(mo), d >= 1,
            d <= RFC3339.daysIn(month: mo, year: y)
        else { return nil }
        let day = RFC3339.daysSince1970(year: y, month: mo, day: d)
        if b.count == 8 {
            return Schedule.instant(day: day + 1, minute: 0, in: zone).addingTimeInterval(-1)
        }
        guard b.count == 16, b[8] == "T", b[15] == "Z", let h = number(9..<11), let mi = number(11..<13),
            let s = number(13..<15),
            h < 24, mi < 60, s < 60
        else { return nil }
        return Date(timeIntervalSince1970: Double(day * 86_400 + h * 3600 + mi * 60 + s))
    }
}

extension Schedule {
    /// The schedule as JSON, in the form `ScheduleParser` reads: what the store keeps.
    public var json: String {
        // Quoted as JSON strings: a zone or rule read back from a corrupt row may hold a quote or backslash.
        var parts = [#""timeZone":"# + JSONValue.string(timeZone.identifier).jsonText]
        if !windows.isEmpty {
            let items = windows.map { w in
                let days = w.days.sorted().map { #""\#($0.shortName)""# }.joined(separator: ",")
                return #"{"days":[\#(days)],"from":"\#(Self.clock(w.from))","to":"\#(Self.clock(w.to))"}"#
            }
            parts.append(#""windows":[\#(items.joined(separator: ","))]"#)
        }
        if let recurrence { parts.append(#""rrule":"# + JSONValue.string(recurrence.text).jsonText) }
        return "{" + parts.joined(separator: ",") + "}"
    }

    static func clock(_ minutes: Int) -> String {
        let h = minutes / 60
        let m = minutes % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }
}
