import AgentFormats
import AgentTestSupport
import Foundation
import GeofenceCore
import GeofenceStore
import Logging
import TestSupport
import Testing

@testable import AgentOutputs
@testable import GeofenceAgent

/// The outputs as plug-ins: what each answers for what happened, in which delivery class, in which
/// order; and each one's settings read from, and written back to, config.json.
@Suite(.offTheCooperativePool(.computing)) struct OutputTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func outputs(_ json: String) throws -> MultiplexOutput {
        let configuration = try AgentConfiguration.parse(Array(json.utf8), name: "config.json")
        return testOutputs(configuration)
    }

    let everything = #"""
        {"fleet":"test","vehicle":"v1","owntracks":{"enabled":true},"homeAssistant":{"enabled":true},
         "metrics":{"enabled":true,"listen":"127.0.0.1:0"}}
        """#

    var enter: MonitorEvent {
        let at = Location(
            coordinate: Coordinate(latitude: 52, longitude: 5), horizontalAccuracy: 3, speed: 10, course: 90,
            timestamp: Date(timeIntervalSince1970: 1_767_225_600))
        return MonitorEvent(
            identifier: "depot", kind: .enter, state: .satisfied, date: at.timestamp, location: at,
            conditionName: "Depot")
    }

    func event(_ e: MonitorEvent, origin: EventHappening.Origin = .fix) -> Happening {
        .event(EventHappening(event: e, monitor: "default", origin: origin, conditionVersion: 7, place: nil))
    }

    func location(_ reason: LocationHappening.Reason) -> Happening {
        .location(
            LocationHappening(
                update: LiveUpdate(location: enter.location, isStationary: false), reason: reason, place: nil,
                inside: [InsideCondition(identifier: "depot", name: "Depot")]))
    }

    @Test func onlyOurOwnTopicsWhenNothingElseIsOn() throws {
        let o = try outputs(#"{"fleet":"test","vehicle":"v1"}"#)
        // Our topics: events, track and location, and trips.
        #expect(o.outputs.count == 2 && !o.needsInsideConditions)
        #expect(o.messages(for: event(enter)).map(\.topic) == [testTopics.events])
        let stop = Stop(
            arrival: enter.date, coordinate: enter.location.coordinate, horizontalAccuracy: 2, conditions: [])
        let trip = o.messages(for: .trip(TripHappening(event: .stopStarted(stop), places: nil)))
        #expect(trip.map(\.topic) == [testTopics.trips] && trip.allSatisfy { $0.delivery == .durable })
        #expect(o.messages(for: location(.liveUpdate)).map(\.topic) == [testTopics.location])
        #expect(
            o.messages(for: location(.transition)).isEmpty, "our location topic carries live updates and answers only")
        #expect(o.announcements().isEmpty && o.announcementRequests.isEmpty)
        #expect(try o.services().isEmpty)
        // Nothing counts fixes: the happening is not even made.
        #expect(!o.observesCounts)
        o.count(
            { () -> Happening in
                Issue.record("a fix's count made for no output")
                return .fix(rejected: nil)
            }())
    }

    /// Prometheus counts what gives no messages; told through `count`, it sees every fix.
    @Test func onlyAnOutputThatCountsIsToldOfEachFix() throws {
        let counting = CountingOutput(observesCounts: true) {
            if case .fix = $0 { true } else { false }
        }
        let o = MultiplexOutput([counting])
        #expect(o.observesCounts)
        for _ in 0..<3 { o.count(.fix(rejected: nil)) }
        #expect(counting.told.count == 3)
        #expect(try outputs(everything).observesCounts, "the metrics output counts")
    }

    @Test func everyOutputAnswersInRegistrationOrderWithItsDeliveryClass() throws {
        let o = try outputs(everything)
        #expect(o.needsInsideConditions)
        let forEvent = o.messages(for: event(enter))
        #expect(
            forEvent.map(\.topic) == [
                testTopics.events, "owntracks/test/v1/event", "\(testTopics.vehicleBase)/homeassistant/event",
            ])
        #expect(forEvent.allSatisfy { $0.delivery == .durable && !$0.retain })
        let forLiveUpdate = o.messages(for: location(.liveUpdate))
        #expect(
            forLiveUpdate.map(\.topic) == [
                testTopics.location, "owntracks/test/v1", "\(testTopics.vehicleBase)/homeassistant/attributes",
            ])
        #expect(forLiveUpdate.allSatisfy { $0.delivery == .droppable && $0.retain })
        // Where a transition happened: only the tracker that shows what the vehicle is inside follows it.
        #expect(
            o.messages(for: location(.transition)).map(\.topic) == [
                "\(testTopics.vehicleBase)/homeassistant/attributes"
            ])
        // A removal's exit reaches every output: OwnTracks' `leave`, Home Assistant's `exit` with its reason.
        let removal = o.messages(
            for: event(MonitorEvent.removalExit("depot", condition: nil, at: enter.location), origin: .removal))
        #expect(
            removal.map(\.topic) == [
                testTopics.events, "owntracks/test/v1/event", "\(testTopics.vehicleBase)/homeassistant/event",
            ])
        let payloads = removal.map { String(decoding: $0.unstampedBytes, as: UTF8.self) }
        #expect(payloads[1].contains(#""event":"leave""#) && payloads[1].contains(#""rid":"depot""#), "\(payloads[1])")
        #expect(
            payloads[2].contains(#""event_type":"exit""#) && payloads[2].contains(#""reason":"removed""#),
            "\(payloads[2])")
    }

    /// A live update `second`s into a drive (parked when `stationary`).
    func liveUpdate(_ second: Double, stationary: Bool = false) -> Happening {
        var at = enter.location
        at.timestamp = at.timestamp.addingTimeInterval(second)
        return .location(
            LocationHappening(
                update: LiveUpdate(location: at, isStationary: stationary), reason: .liveUpdate, place: nil,
                inside: []))
    }

    @Test func eachOutputKeepsItsOwnPaceForLiveUpdates() throws {
        let o = try outputs(
            #"""
            {"fleet":"test","vehicle":"v1","owntracks":{"enabled":true,"locationIntervalSeconds":20},
             "homeAssistant":{"enabled":true,"parkedIntervalSeconds":600}}
            """#)
        var sent: [String: [Int]] = [:]
        // Two minutes moving, then an hour parked.
        for second in 0..<3_720 {
            for message in o.messages(for: liveUpdate(Double(second), stationary: second >= 120)) {
                sent[message.topic, default: []].append(second)
            }
        }
        #expect(sent[testTopics.location] == [0, 120, 1020, 1920, 2820])
        #expect(sent["owntracks/test/v1"] == [0, 20, 40, 60, 80, 100, 120, 1020, 1920, 2820])
        #expect(
            sent["\(testTopics.vehicleBase)/homeassistant/attributes"]
                == [0, 30, 60, 90, 120, 720, 1320, 1920, 2520, 3120])
        // A request is answered at once by those that answer it, and their pace counts from it.
        let answered = o.messages(for: location(.requested)).map(\.topic)
        #expect(answered.contains(testTopics.location) && answered.contains("owntracks/test/v1"))
    }

    @Test func ourEventIsStampedByTheOutboxAndTheirsAreReadyMade() throws {
        let o = try outputs(everything)
        let items = o.messages(for: event(enter)).compactMap(\.outboxItem)
        #expect(items.map(\.kind) == [.transition, .transition, .transition])
        let ours = try #require(
            JSONSerialization.jsonObject(with: Data(items[0].payload("id-1", 41))) as? [String: Any])
        #expect(ours["eventId"] as? String == "id-1" && ours["sequence"] as? Int == 41)
        let theirs = try #require(
            JSONSerialization.jsonObject(with: Data(items[1].payload("id-2", 42))) as? [String: Any])
        #expect(theirs["_type"] as? String == "transition" && theirs["wtst"] as? Int == 7)
    }

    @Test func announcementsAreLatestOnlyAndNeverQueued() throws {
        let o = try outputs(everything)
        let announcements = o.announcements()
        #expect(!announcements.isEmpty && announcements.allSatisfy { $0.delivery == .latestOnly && $0.retain })
        #expect(announcements.allSatisfy { $0.outboxItem == nil })
        #expect(o.announcementRequests.map(\.topic) == ["homeassistant/status"])
    }

    @Test func theOutputsServicesAreTheirOwn() throws {
        // OwnTracks' will connection, the Prometheus endpoint; with a textfile, its timer too.
        let o = try outputs(everything)
        #expect(try o.services().count == 2)
        let withTextfile = try outputs(#"{"fleet":"test","vehicle":"v1","metrics":{"textfile":"/tmp/agent.prom"}}"#)
        #expect(try withTextfile.services().count == 1)
    }

    /// The motion check's and the trips' keys are read, written back, and a bad value is refused with its
    /// path.
    @Test func motionCheckAndTripsGoThroughConfigJSONAndBack() throws {
        let json =
            #"{"fleet":"test","vehicle":"v1","motionCheck":{"enabled":false,"confidence":0.999,"maximumExcursion":60},"#
            + #""trips":{"minimalTripDistance":800,"minimalParkingDuration":120,"speedThreshold":1.2}}"#
        let c = try AgentConfiguration.parse(Array(json.utf8), name: "config.json")
        #expect(!c.monitor.motionCheck.enabled && c.monitor.motionCheck.confidence == 0.999)
        #expect(c.monitor.motionCheck.maximumExcursion == 60)
        #expect(c.monitor.trips.minimalTripDistance == 800 && c.monitor.trips.minimalParkingDuration == 120)
        #expect(c.monitor.trips.rest.movingSpeed == 1.2)
        #expect(try AgentConfiguration.parse(Array(c.json.jsonText.utf8), name: "again") == c)
        do {
            _ = try AgentConfiguration.parse(
                Array(#"{"fleet":"f","vehicle":"v","trips":{"minimalParkingDuration":-1}}"#.utf8), name: "config.json")
            Issue.record("a negative parking duration was accepted")
        } catch {
            #expect("\(error)".contains("trips.minimalParkingDuration"), "\(error)")
        }
    }

    /// Each output reads its own object; the configuration writes it back in the form it reads.
    @Test func settingsGoThroughConfigJSONAndBack() throws {
        let c = try AgentConfiguration.parse(
            Array(
                #"""
                {"fleet":"test","vehicle":"v1","owntracks":{"enabled":true,"tid":"x1"},"homeAssistant":{"discoveryPrefix":"ha"},
                 "metrics":{"textfile":"m.prom"}}
                """#.utf8), name: "config.json")
        #expect(c.outputs[OwnTracksSettings.self].tid == "x1" && c.outputs[OwnTracksSettings.self].enabled)
        #expect(c.outputs[HomeAssistantSettings.self].discoveryPrefix == "ha")
        #expect(c.outputs[MetricsSettings.self].textfile == "m.prom")
        guard case .object(let top) = c.json else {
            Issue.record("not an object")
            return
        }
        for key in ["owntracks", "homeAssistant", "metrics"] { #expect(top[key] != nil, "\(key) is written out") }
        #expect(
            try AgentConfiguration.parse(Array(c.json.jsonText.utf8), name: "again") == c,
            "read back, the same configuration")
        // A mistake in an output's object is refused with its path, as every key is.
        #expect(throws: AgentError.self) {
            try AgentConfiguration.parse(
                Array(#"{"fleet":"f","vehicle":"v","owntracks":{"tid":"toolong"}}"#.utf8), name: "config.json")
        }
    }
}
