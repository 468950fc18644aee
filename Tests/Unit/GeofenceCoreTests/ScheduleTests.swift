import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// Schedules (issue 20): windows across midnight and week boundaries, both daylight-saving changes in
/// Europe/Amsterdam and America/New_York, the RRULE subset, validation, and the monitor's events.
@Suite(.offTheCooperativePool(.computing)) struct ScheduleTests {
    func schedule(_ json: String) throws -> Schedule {
        try ScheduleParser.parse(try JSONParser.parse(Array(json.utf8)))
    }

    func at(_ text: String) -> Date { RFC3339.date(from: text)! }

    @Test func aWindowAcrossMidnightEndsTheNextMorning() throws {
        let s = try schedule(
            #"{"timeZone":"Europe/Amsterdam","windows":[{"days":["fri"],"from":"22:00","to":"06:00"}]}"#)
        #expect(s.isActive(at: at("2026-06-05T23:00:00+02:00")))  // Friday night
        #expect(s.isActive(at: at("2026-06-06T05:59:59+02:00")))  // Saturday morning
        #expect(!s.isActive(at: at("2026-06-06T06:00:00+02:00")))
        #expect(!s.isActive(at: at("2026-06-04T23:00:00+02:00")))  // Thursday
        #expect(!s.isActive(at: at("2026-06-05T21:59:59+02:00")))
    }

    @Test func aWindowAcrossTheWeekBoundary() throws {
        let s = try schedule(
            #"{"timeZone":"UTC","windows":[{"days":["sun"],"from":"22:00","to":"02:00"},{"days":["mon"],"from":"07:00","to":"24:00"}]}"#
        )
        #expect(s.isActive(at: at("2026-06-08T01:00:00Z")))  // Monday 01:00, from Sunday's window
        #expect(!s.isActive(at: at("2026-06-08T02:00:00Z")))
        #expect(s.isActive(at: at("2026-06-08T23:59:59Z")))
        #expect(!s.isActive(at: at("2026-06-09T00:00:00Z")))
        #expect(!s.isActive(at: at("2026-06-14T21:00:00Z")))
    }

    /// Amsterdam skips 02:00–03:00 on 29 March 2026 and repeats it on 25 October.
    @Test func amsterdamsDaylightSavingChanges() throws {
        let office = try schedule(#"{"timeZone":"Europe/Amsterdam","windows":[{"from":"07:00","to":"19:00"}]}"#)
        // 07:00 CEST, 07:00 CET, 19:00 CET.
        #expect(!office.isActive(at: at("2026-03-29T04:59:59Z")) && office.isActive(at: at("2026-03-29T05:00:00Z")))
        #expect(!office.isActive(at: at("2026-03-28T05:59:59Z")) && office.isActive(at: at("2026-03-28T06:00:00Z")))
        #expect(office.isActive(at: at("2026-10-25T17:59:59Z")) && !office.isActive(at: at("2026-10-25T18:00:00Z")))
        // A window opening in the skipped hour opens at the jump, 03:00 CEST.
        let night = try schedule(#"{"timeZone":"Europe/Amsterdam","windows":[{"from":"02:30","to":"04:00"}]}"#)
        #expect(!night.isActive(at: at("2026-03-29T00:59:59Z")) && night.isActive(at: at("2026-03-29T01:00:00Z")))
        #expect(night.isActive(at: at("2026-03-29T01:59:59Z")) && !night.isActive(at: at("2026-03-29T02:00:00Z")))
        // A window ending in the repeated hour ends at its first 02:30 and does not open again in the second.
        let late = try schedule(#"{"timeZone":"Europe/Amsterdam","windows":[{"from":"01:00","to":"02:30"}]}"#)
        #expect(late.isActive(at: at("2026-10-24T23:00:00Z")))  // 01:00 CEST
        // 02:30 CEST.
        #expect(late.isActive(at: at("2026-10-25T00:29:59Z")) && !late.isActive(at: at("2026-10-25T00:30:00Z")))
        #expect(!late.isActive(at: at("2026-10-25T01:15:00Z")))  // 02:15 CET
    }

    /// New York springs forward on 8 March 2026 and falls back on 1 November.
    @Test func newYorksDaylightSavingChanges() throws {
        let s = try schedule(
            #"{"timeZone":"America/New_York","windows":[{"days":["sun"],"from":"07:00","to":"19:00"}]}"#)
        #expect(!s.isActive(at: at("2026-03-08T10:59:59Z")) && s.isActive(at: at("2026-03-08T11:00:00Z")))  // 07:00 EDT
        #expect(!s.isActive(at: at("2026-11-01T11:59:59Z")) && s.isActive(at: at("2026-11-01T12:00:00Z")))  // 07:00 EST
        #expect(s.isActive(at: at("2026-11-01T23:59:59Z")) && !s.isActive(at: at("2026-11-02T00:00:00Z")))  // 19:00 EST
    }

    /// Away from the changes, a window holds exactly the instants whose local wall time (by Foundation's
    /// calendar) falls in it.
    @Test func windowsAgreeWithTheCalendarsWallTime() async throws {
        let zone = TimeZone(identifier: "Europe/Amsterdam")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let s = try schedule(
            #"{"timeZone":"Europe/Amsterdam","windows":[{"days":["mon","wed","sat"],"from":"21:15","to":"03:45"}]}"#)
        await propertyCheck(count: 2000, input: Gen.int(in: 1_577_836_800...1_893_456_000)) { seconds in
            let date = Date(timeIntervalSince1970: Double(seconds))
            guard
                zone.secondsFromGMT(for: date.addingTimeInterval(-10_800))
                    == zone.secondsFromGMT(for: date.addingTimeInterval(10_800))
            else { return }
            let c = calendar.dateComponents([.weekday, .hour, .minute], from: date)
            let minute = c.hour! * 60 + c.minute!
            let today = (c.weekday! + 5) % 7  // Monday 0
            let yesterday = (today + 6) % 7
            let days: Set<Int> = [0, 2, 5]
            let expected =
                (days.contains(today) && minute >= 21 * 60 + 15) || (days.contains(yesterday) && minute < 3 * 60 + 45)
            #expect(s.isActive(at: date) == expected, "\(date)")
        }
    }

    @Test func theRRuleSubset() throws {
        let s = try schedule(
            #"{"timeZone":"Europe/Amsterdam","rrule":"FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=7,8;UNTIL=20261231T235959Z"}"#)
        #expect(s.isActive(at: at("2026-06-08T07:30:00+02:00")))  // Monday
        #expect(s.isActive(at: at("2026-06-10T08:59:59+02:00")))  // Wednesday
        #expect(!s.isActive(at: at("2026-06-08T09:00:00+02:00")))
        #expect(!s.isActive(at: at("2026-06-09T07:30:00+02:00")))  // Tuesday
        #expect(!s.isActive(at: at("2027-01-04T07:30:00+01:00")))  // a Monday after UNTIL
        let daily = try schedule(#"{"timeZone":"UTC","rrule":"FREQ=DAILY;BYHOUR=12;UNTIL=20260610"}"#)
        #expect(daily.isActive(at: at("2026-06-10T12:30:00Z")) && !daily.isActive(at: at("2026-06-11T12:30:00Z")))
        // The stored form reads back the same.
        #expect(try schedule(s.json) == s)
    }

    @Test(arguments: [
        (
            #"{"timeZone":"Mars/Olympus","windows":[{"from":"07:00","to":"19:00"}]}"#, "properties.schedule.timeZone",
            "is not an IANA time zone"
        ),
        (
            #"{"timeZone":"UTC","windows":[{"from":"7:00","to":"19:00"}]}"#, "properties.schedule.windows[0].from",
            "is not a time"
        ),
        (
            #"{"timeZone":"UTC","windows":[{"from":"07:00","to":"19:00","days":["mon","funday"]}]}"#,
            "properties.schedule.windows[0].days[1]", "expected one of"
        ),
        (
            #"{"timeZone":"UTC","windows":[{"from":"07:00","to":"07:00"}]}"#, "properties.schedule.windows[0].to",
            "is empty"
        ),
        (#"{"timeZone":"UTC"}"#, "properties.schedule.windows", "at least one window or an rrule"),
        (#"{"timeZone":"UTC","rrule":"FREQ=DAILY;COUNT=3"}"#, "properties.schedule.rrule", "COUNT is not supported"),
        (#"{"timeZone":"UTC","rrule":"FREQ=WEEKLY"}"#, "properties.schedule.rrule", "FREQ=WEEKLY needs BYDAY"),
        (#"{"timeZone":"UTC","windows":[],"hours":3}"#, "properties.schedule.hours", "unknown key"),
    ])
    func badSchedulesAreRefusedWithTheirPath(json: String, path: String, message: String) {
        let load = decode(
            feature("z", #"{"type":"Point","coordinates":[5.0,52.0]}"#, #"{"radius":100,"schedule":\#(json)}"#))
        let error = load.errors.first
        #expect(
            error?.path.hasSuffix(path) == true && error?.message.contains(message) == true,
            "\(String(describing: error))")
    }

    /// A depot open 07:00–19:00 UTC with the truck inside from 06:00: `active` (satisfied) when it opens,
    /// `inactive` when it closes, and neither its first state (at 06:00) nor the exit at 20:00 is
    /// published, though both are tracked.
    @Test func theMonitorOpensAndClosesWithTheSchedule() throws {
        let depot = Coordinate(latitude: 52.0, longitude: 5.0)
        let schedule = try schedule(#"{"timeZone":"UTC","windows":[{"from":"07:00","to":"19:00"}]}"#)
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(
            try Condition(geometry: .circle(center: depot, radius: 100), rules: ConditionRules(schedule: schedule)),
            identifier: "depot")
        let start = at("2026-06-08T06:00:00Z").timeIntervalSince1970 - 1_700_000_000
        var published: [String] = []
        var all: [EventKind] = []
        let far = offset(depot, metres: 500, bearing: 0)
        for minute in stride(from: 0.0, through: 15 * 60, by: 1) {
            let p = minute < 14 * 60 ? depot : far  // leaves at 20:00, after closing
            let events = e.process(fix(p.latitude, p.longitude, t: start + minute * 60)).events
            all += events.map(\.kind)
            published += events.filter(\.isNotified).map { "\($0.kind.rawValue) \($0.state.rawValue)" }
        }
        #expect(all == [.initial, .active, .inactive, .exit], "\(all)")
        // The first state comes while closed, so only the opening says it.
        #expect(published == ["active satisfied", "inactive satisfied"], "\(published)")
        #expect(e.record(for: "depot")?.state == .unsatisfied, "the state is tracked while inactive")
    }
}
