import AgentOutputs
import AgentTestSupport
import Foundation
import GeofenceAgent
import GeofenceCore
import GeofenceStore
import TestSupport
import Testing

/// OwnTracks' payloads, field by field against the booklet (owntracks/booklet, docs/tech/json.md): each
/// field's name, JSON type and unit. The table is the booklet's; a payload may carry only its fields.
@Suite(.offTheCooperativePool(.computing)) struct OwnTracksPayloadTests {
    enum Kind: Equatable { case integer, float, string, strings }

    /// `_type=location` in the booklet: field → type (units in the comments).
    static let locationFields: [String: Kind] = [
        "_type": .string, "lat": .float, "lon": .float,  // degrees
        "tst": .integer, "created_at": .integer,  // epoch seconds
        "acc": .integer, "alt": .integer, "vac": .integer,  // metres
        "vel": .integer,  // km/h
        "cog": .integer,  // degrees
        "tid": .string, "t": .string, "inregions": .strings, "inrids": .strings,
    ]
    /// `_type=transition`; wtst, tst, acc and event are required there, and Recorder needs desc.
    static let transitionFields: [String: Kind] = [
        "_type": .string, "wtst": .integer, "tst": .integer, "lat": .float, "lon": .float, "acc": .integer,
        "tid": .string,
        "event": .string, "desc": .string, "t": .string, "rid": .string, "created_at": .integer,
    ]
    static let identity = OwnTracks.Identity(user: "demo", device: "vehicle-1")
    static let fix = Location(
        coordinate: Coordinate(latitude: 52.849371667, longitude: 5.311893333), altitudeMSL: 41.8,
        horizontalAccuracy: 4.6,
        verticalAccuracy: 7.2, speed: 5.0, course: 359.7, timestamp: Date(timeIntervalSince1970: 1_534_758_506.4),
        gpsTime: Date(timeIntervalSince1970: 1_534_758_506.0))

    func object(_ bytes: [UInt8]?) throws -> [String: Any] {
        let payload = try #require(bytes)
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    /// Each field is the booklet's, of its type; integers are checked in the text (no fraction, no exponent).
    func check(_ bytes: [UInt8]?, against table: [String: Kind]) throws {
        let text = String(decoding: try #require(bytes), as: UTF8.self)
        let o = try object(bytes)
        for (key, value) in o {
            guard let kind = table[key] else {
                Issue.record("\(key) is not a field of the booklet's \(o["_type"] ?? "")")
                continue
            }
            switch kind {
            case .integer:
                #expect(text.contains(try Regex(#""\#(key)":-?[0-9]+[,}]"#)), "\(key): \(value) is an integer")
            case .float: #expect(value is Double, "\(key): \(value) is a number")
            case .string: #expect(value is String, "\(key): \(value) is a string")
            case .strings: #expect(value is [String], "\(key): \(value) is a list of strings")
            }
        }
    }

    @Test func aLocationCarriesTheBookletsFieldsInItsUnits() throws {
        let payload = OwnTracks.location(
            Self.fix, identity: Self.identity, trigger: .ping,
            inside: [.init(identifier: "channel", name: "Buoyed channel"), .init(identifier: "route", name: nil)],
            createdAt: Date(timeIntervalSince1970: 1_763_900_000.9))
        try check(payload, against: Self.locationFields)
        let o = try object(payload)
        #expect(o["_type"] as? String == "location")
        #expect(o["lat"] as? Double == 52.849371667 && o["lon"] as? Double == 5.311893333)
        #expect(o["tst"] as? Int == 1_534_758_506, "the GPS time of the fix, in whole seconds")
        #expect(o["acc"] as? Int == 5 && o["alt"] as? Int == 42 && o["vac"] as? Int == 7, "metres, rounded")
        #expect(o["vel"] as? Int == 18, "5 m/s is 18 km/h")
        #expect(o["cog"] as? Int == 0, "359.7° rounds to 360, which is 0")
        #expect(o["tid"] as? String == "e1", "the device's last two letters or digits")
        #expect(o["t"] as? String == "p")
        #expect(
            o["inregions"] as? [String] == ["Buoyed channel", "route"]
                && o["inrids"] as? [String] == ["channel", "route"])
        #expect(o["created_at"] as? Int == 1_763_900_000)
    }

    @Test func unknownValuesAreLeftOutAsTheAppsDo() throws {
        let bare = Location(
            coordinate: Coordinate(latitude: 1, longitude: 2), horizontalAccuracy: -1,
            timestamp: Date(timeIntervalSince1970: 100))
        let o = try object(
            OwnTracks.location(
                bare, identity: OwnTracks.Identity(user: "u", device: "d", tid: "TR"), trigger: .response,
                inside: [], createdAt: Date(timeIntervalSince1970: 101)))
        #expect(Set(o.keys) == ["_type", "lat", "lon", "tst", "tid", "t", "inregions", "inrids", "created_at"])
        #expect(o["tst"] as? Int == 100, "without a GPS time, the fix's own time")
        #expect(o["tid"] as? String == "TR" && o["t"] as? String == "r")
        #expect(o["inregions"] as? [String] == [])
    }

    @Test func transitionsAreEnterAndLeaveOnlyAndAlwaysComplete() throws {
        func event(_ kind: EventKind) -> MonitorEvent {
            MonitorEvent(
                identifier: "channel", kind: kind, state: kind == .exit ? .unsatisfied : .satisfied,
                date: Self.fix.timestamp,
                location: Self.fix, conditionName: "Buoyed channel")
        }
        let enterPayload = OwnTracks.transition(
            event(.enter), identity: Self.identity, waypointTime: 1_700_000_000,
            createdAt: Date(timeIntervalSince1970: 5))
        try check(enterPayload, against: Self.transitionFields)
        let enter = try object(enterPayload)
        #expect(
            Set(enter.keys).isSuperset(of: ["wtst", "tst", "acc", "event", "desc", "lat", "lon", "tid", "t", "rid"]))
        #expect(
            enter["event"] as? String == "enter" && enter["desc"] as? String == "Buoyed channel"
                && enter["rid"] as? String == "channel")
        #expect(
            enter["wtst"] as? Int == 1_700_000_000 && enter["tst"] as? Int == 1_534_758_506
                && enter["t"] as? String == "c")
        let leave = try object(
            OwnTracks.transition(event(.exit), identity: Self.identity, waypointTime: nil, createdAt: Date()))
        #expect(leave["event"] as? String == "leave" && leave["wtst"] as? Int == 0)
        for kind in [EventKind.dwell, .crossed, .initial, .overspeed, .active] {
            #expect(
                OwnTracks.transition(event(kind), identity: Self.identity, waypointTime: nil, createdAt: Date()) == nil,
                "\(kind) has no OwnTracks form")
        }
        var unnamed = event(.enter)
        unnamed.conditionName = nil
        #expect(
            try object(OwnTracks.transition(unnamed, identity: Self.identity, waypointTime: nil, createdAt: Date()))[
                "desc"] as? String == "channel",
            "desc is never missing: the identifier stands in for a name")
    }

    @Test func theWillAndTheWaypoints() throws {
        let will = try object(OwnTracks.lastWill(connectedAt: Date(timeIntervalSince1970: 1_763_900_000)))
        #expect(will.count == 2 && will["_type"] as? String == "lwt" && will["tst"] as? Int == 1_763_900_000)
        let circle = try Condition(
            geometry: .circle(center: Coordinate(latitude: 52.37, longitude: 4.89), radius: 150.4), name: "Depot",
            version: 1_700_000_000)
        let polygon = try Condition(
            geometry: .polygon(parts: [
                [
                    [
                        Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1),
                        Coordinate(latitude: 1, longitude: 1), Coordinate(latitude: 0, longitude: 0),
                    ]
                ]
            ]))
        #expect(OwnTracks.waypoint(identifier: "yard", condition: polygon) == nil, "a polygon has no OwnTracks form")
        let w = try #require(OwnTracks.waypoint(identifier: "depot", condition: circle))
        let list = try object(OwnTracks.waypoints([w]))
        #expect(list["_type"] as? String == "waypoints")
        let first = try #require((list["waypoints"] as? [[String: Any]])?.first)
        #expect(
            first["_type"] as? String == "waypoint" && first["desc"] as? String == "Depot"
                && first["rad"] as? Int == 150)
        #expect(
            first["lat"] as? Double == 52.37 && first["lon"] as? Double == 4.89 && first["tst"] as? Int == 1_700_000_000
                && first["rid"] as? String == "depot")
    }
}

/// OwnTracks' commands, read without acting on them.
@Suite(.offTheCooperativePool(.computing)) struct OwnTracksCommandTests {
    func parse(_ text: String) -> Result<OwnTracksCommand, CommandRefusal> { OwnTracksCommand.parse(Array(text.utf8)) }

    @Test func theActionsTheAgentTakes() {
        #expect(parse(#"{"_type":"cmd","action":"reportLocation"}"#) == .success(.reportLocation))
        #expect(parse(#"{"_type":"cmd","action":"clearWaypoints"}"#) == .success(.clearWaypoints))
        #expect(parse(#"{"_type":"cmd","action":"waypoints"}"#) == .success(.waypoints))
        let depot = OwnTracks.Waypoint(
            description: "Depot", latitude: 52.37, longitude: 4.89, radius: 150, time: 1_700_000_000, regionID: "d3p0t")
        let booklet =
            #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Depot","lat":52.37,"lon":4.89,"rad":150,"tst":1700000000,"rid":"d3p0t"}]}}"#
        #expect(parse(booklet) == .success(.setWaypoints([depot])))
        let bare =
            #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"Depot","lat":52.37,"lon":4.89,"rad":150,"tst":1700000000,"rid":"d3p0t"}]}"#
        #expect(parse(bare) == .success(.setWaypoints([depot])))
    }

    @Test func refusalsSayWhatAndWhere() {
        func reason(_ text: String) -> String {
            if case .failure(let r) = parse(text) { return r.reason }
            return "accepted"
        }
        #expect(reason("reportLocation") == #"an OwnTracks command is a JSON object with "_type": "cmd""#)
        #expect(reason(#"{"_type":"location","action":"reportLocation"}"#) == #"_type: expected "cmd""#)
        #expect(reason(#"{"_type":"cmd","action":"dump"}"#).hasPrefix("action: unknown action 'dump'"))
        #expect(
            reason(
                #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":91,"lon":4,"rad":5,"tst":1}]}"#)
                == "waypoints[0].lat: latitude 91.0 is outside [-90, 90]")
        #expect(
            reason(
                #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":1,"lon":4,"rad":5,"tst":1},{"desc":"Beacon","uuid":"x","major":1,"minor":2,"tst":1}]}"#
            )
            .hasPrefix("waypoints[1].lat, lon, rad: a beacon waypoint"))
        #expect(
            reason(#"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":1,"lon":4,"rad":5}]}"#)
                .hasPrefix("waypoints[0].tst:"))
        #expect(
            reason(
                #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":1,"lon":4,"rad":5,"tst":1,"rid":"a/b"}]}"#
            ).hasPrefix("waypoints[0].rid:"))
    }

    @Test func aWaypointBecomesACircleConditionFromOwnTracks() throws {
        let w = OwnTracks.Waypoint(
            description: "Depot", latitude: 52.37, longitude: 4.89, radius: 150, time: 1_700_000_000, regionID: nil)
        guard case .success(.put(let input)) = OwnTracksCommand.change(for: w) else {
            Issue.record("refused")
            return
        }
        #expect(input.identifier == "owntracks-1700000000" && input.monitor == "default" && input.source == "owntracks")
        #expect(input.condition.name == "Depot" && input.condition.version == 1_700_000_000)
        guard case .circle(let c) = input.condition.region else {
            Issue.record("not a circle")
            return
        }
        #expect(c.radius == 150 && c.center == Coordinate(latitude: 52.37, longitude: 4.89))
    }
}
