import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// `notify` and `expires` (issue 20): validation with paths, the store's compact form, and the monitor.
@Suite(.offTheCooperativePool(.computing)) struct ConditionRulesTests {
    let depot = Coordinate(latitude: 52.0, longitude: 5.0)
    let base = Date(timeIntervalSince1970: 1_700_000_000)

    // MARK: RFC 3339

    @Test func rfc3339DatesWithOffsetsAndFractions() {
        #expect(RFC3339.date(from: "1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(RFC3339.date(from: "2023-11-14T22:13:20Z") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(RFC3339.date(from: "2023-11-14T23:13:20+01:00") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(RFC3339.date(from: "2023-11-14T17:13:20.25-05:00") == Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(RFC3339.date(from: "2024-02-29T00:00:00z") == Date(timeIntervalSince1970: 1_709_164_800))
        for bad in [
            "2023-11-14T22:13:20", "2023-11-14", "2023-02-29T00:00:00Z", "2023-13-01T00:00:00Z", "2023-11-14T24:00:00Z",
            "2023-11-14T22:13:20.Z", "2023-11-14T22:13:20+0100", "2023-11-14T22:13:20Z ", "tomorrow", "",
        ] {
            #expect(RFC3339.date(from: bad) == nil, "\(bad)")
        }
    }

    /// Every second from 1900 to 2200 written out and read back.
    @Test func rfc3339ReadsBackWhatFoundationWrites() async {
        await propertyCheck(count: 500, input: Gen.int(in: -2_208_988_800...7_258_118_400)) { seconds in
            let date = Date(timeIntervalSince1970: Double(seconds))
            let text = date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt))
            #expect(RFC3339.date(from: text) == date, "\(text)")
        }
    }

    // MARK: Validation and storage

    @Test func notifyAndExpiresAreReadAndKeptByTheStoresForm() throws {
        let load = decode(
            feature(
                "depot", #"{"type":"Point","coordinates":[5.0,52.0]}"#,
                #"{"radius":100,"notify":["exit","dwell"],"expires":"2026-12-31T18:00:00+01:00"}"#))
        let condition = try #require(load.definitions.first?.condition)
        #expect(condition.rules.notify == [.exit, .dwell])
        #expect(condition.rules.expires == RFC3339.date(from: "2026-12-31T17:00:00Z"))
        let back = try ConditionCodec.decode(ConditionCodec.encode(condition))
        #expect(back == condition)
        #expect(ConditionCodec.encode(condition).first == 3)
        // Without rules a condition keeps the older forms.
        let plain = try Condition.circle(center: depot, radius: 100)
        #expect(ConditionCodec.encode(plain).first == 1)
    }

    @Test(arguments: [
        (#"{"radius":100,"notify":"exit"}"#, "properties.notify", "expected a list of event kinds, found string"),
        (#"{"radius":100,"notify":["exit","leave"]}"#, "properties.notify[1]", "'leave' is not an event kind"),
        (#"{"radius":100,"notify":["exit",3]}"#, "properties.notify[1]", "expected an event kind, found number"),
        (#"{"radius":100,"notify":["exit","exit"]}"#, "properties.notify[1]", "'exit' is listed twice"),
        (#"{"radius":100,"expires":"2026-12-31"}"#, "properties.expires", "is not an RFC 3339 date-time"),
        (#"{"radius":100,"expires":1767200000}"#, "properties.expires", "expected a string, found number"),
        (#"{"radius":100,"expires":"0000-12-31T23:59:59+01:00"}"#, "properties.expires", "outside years 1 to 9999"),
        (#"{"radius":100,"expires":"9999-12-31T23:59:59-01:00"}"#, "properties.expires", "outside years 1 to 9999"),
    ])
    func badRulesAreRefusedWithTheirPath(properties: String, path: String, message: String) {
        let load = decode(feature("depot", #"{"type":"Point","coordinates":[5.0,52.0]}"#, properties))
        #expect(load.definitions.isEmpty)
        let error = load.errors.first
        #expect(error?.path.hasSuffix(path) == true, "\(String(describing: error))")
        #expect(error?.message.contains(message) == true, "\(String(describing: error))")
    }

    // MARK: The monitor

    @Test func anExpiryDuringAStayExitsOnceAndRemovesTheCondition() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        let expires = base.addingTimeInterval(95)
        e.add(
            try Condition(geometry: .circle(center: depot, radius: 100), rules: ConditionRules(expires: expires)),
            identifier: "depot")
        var events: [MonitorEvent] = []
        for t in stride(from: 0.0, through: 200, by: 10) {
            events += e.process(fix(depot.latitude, depot.longitude, t: t)).events
            if t == 100 { #expect(e.expiredIdentifiers == ["depot"]) }
        }
        #expect(events.map(\.kind) == [.initial, .exit])
        #expect(events[1].reason == .expired)
        #expect(events[1].date == expires)
        #expect(events[1].state == .unsatisfied)
        #expect(e.record(for: "depot") == nil)
        #expect(e.count == 0)
    }

    @Test func anExpiredConditionOutsideLeavesWithoutAnEvent() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(
            try Condition(
                geometry: .circle(center: depot, radius: 100),
                rules: ConditionRules(expires: base.addingTimeInterval(15))), identifier: "depot")
        e.add(try .circle(center: depot, radius: 100), identifier: "stays")
        let far = offset(depot, metres: 500, bearing: 0)
        #expect(e.process(fix(far.latitude, far.longitude, t: 0)).events.map(\.kind) == [.initial, .initial])
        #expect(e.process(fix(far.latitude, far.longitude, t: 20)).events.isEmpty)
        #expect(e.expiredIdentifiers == ["depot"])
        #expect(e.identifiers == ["stays"])
    }

    /// A restart after the expiry time: the restored record is still satisfied, so the first fix exits
    /// once, and none after it.
    @Test func anExpiryAfterARestartExitsOnce() throws {
        var before = MonitorEngine(name: "m", configuration: .eachFixAlone)
        let expires = base.addingTimeInterval(50)
        before.add(
            try Condition(geometry: .circle(center: depot, radius: 100), rules: ConditionRules(expires: expires)),
            identifier: "depot")
        _ = before.process(fix(depot.latitude, depot.longitude, t: 0))
        var after = MonitorEngine(name: "m", configuration: .eachFixAlone)
        after.restore(contentsOf: before.records)
        after.restoreLastAcceptedFix(before.lastAcceptedFix)
        var kinds: [EventKind] = []
        for t in stride(from: 100.0, through: 140, by: 10) {
            kinds += after.process(fix(depot.latitude, depot.longitude, t: t)).events.map(\.kind)
        }
        #expect(kinds == [.exit])
    }

    @Test func replacingAConditionMovesOrDropsItsExpiry() throws {
        var e = MonitorEngine(name: "m", configuration: .eachFixAlone)
        e.add(
            try Condition(
                geometry: .circle(center: depot, radius: 100),
                rules: ConditionRules(expires: base.addingTimeInterval(10))), identifier: "depot")
        e.add(try .circle(center: depot, radius: 100), identifier: "depot")
        _ = e.process(fix(depot.latitude, depot.longitude, t: 0))
        _ = e.process(fix(depot.latitude, depot.longitude, t: 60))
        #expect(e.identifiers == ["depot"])
        e.add(
            try Condition(
                geometry: .circle(center: depot, radius: 100),
                rules: ConditionRules(expires: base.addingTimeInterval(100))), identifier: "depot")
        #expect(e.process(fix(depot.latitude, depot.longitude, t: 90)).events.isEmpty)
        #expect(e.process(fix(depot.latitude, depot.longitude, t: 110)).events.map(\.reason) == [.expired])
    }

    @Test func notifyChoosesWhatIsPublishedWhileTheStateIsKept() async throws {
        let monitor = Monitor("m", configuration: .eachFixAlone)
        try await monitor.add(
            try Condition(
                geometry: .circle(center: depot, radius: 100), dwell: 20, rules: ConditionRules(notify: [.exit])),
            identifier: "depot")
        let stream = monitor.events
        let far = offset(depot, metres: 500, bearing: 0)
        var all: [MonitorEvent] = []
        for (t, p) in [(0.0, far), (10, depot), (20, depot), (40, depot), (50, far)] {
            all += await monitor.update(with: fix(p.latitude, p.longitude, t: t)).events
            if t == 40 { #expect(await monitor.record(for: "depot")?.state == .satisfied) }
        }
        #expect(all.map(\.kind) == [.initial, .enter, .dwell, .exit])
        #expect(all.map(\.isNotified) == [false, false, false, true])
        await monitor.finish()
        var published: [EventKind] = []
        for await event in stream { published.append(event.kind) }
        #expect(published == [.exit])
    }

    @Test func removingASatisfiedConditionExitsAtTheLastFix() async throws {
        let monitor = Monitor("m", configuration: .eachFixAlone)
        try await monitor.add(try .circle(center: depot, radius: 100), identifier: "inside")
        try await monitor.add(
            try .circle(center: offset(depot, metres: 1000, bearing: 0), radius: 100), identifier: "outside")
        await monitor.update(with: fix(depot.latitude, depot.longitude, t: 0))
        let exit = try #require(await monitor.remove("inside"))
        #expect(exit.kind == .exit && exit.reason == .removed && exit.state == .unsatisfied)
        #expect(exit.date == base)
        #expect(await monitor.remove("outside") == nil)
        #expect(await monitor.identifiers.isEmpty)
    }
}
