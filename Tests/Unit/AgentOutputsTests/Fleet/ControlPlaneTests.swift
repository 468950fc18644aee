import Foundation
import GeofenceCore
import GeofenceStore
import Mosquitto
import TestSupport
import Testing

@testable import AgentOutputs

/// The control plane names the control topics and how each is kept; the runtime only says when.
@Suite(.offTheCooperativePool(.computing)) struct ControlPlaneTests {
    let plane = ControlPlane(topics: Topics(prefix: "fleet", fleet: "demo", vehicle: "bus-7"))

    func json(_ payload: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    @Test func theWillTurnsTheRetainedStatusOffline() throws {
        let will = plane.will
        #expect(will.topic == "fleet/demo/vehicles/bus-7/status")
        #expect(will.retain && will.qos == .atLeastOnce)
        let body = try json(will.payload)
        #expect(body["status"] as? String == "offline")
        #expect(body["fleet"] as? String == "demo" && body["vehicle"] as? String == "bus-7")
    }

    @Test func theStatusAndTheStateAreKeptTheDetailIsNot() throws {
        let online = AgentStatus(
            status: "online", fleet: "demo", vehicle: "bus-7", version: "test", pid: 0, updated: "", startedAt: "",
            broker: "connected", gps: .init(state: "fix"), monitors: [], conditions: 0, outbox: OutboxStats(),
            outboxCaps: OutboxLimits(), store: "ok", waitingStateChanges: 0, liveUpdates: true)
        let status = try #require(plane.status(online))
        #expect(status.topic == plane.will.topic && status.retain)
        #expect(try json(status.payload)["vehicle"] as? String == "bus-7")

        let state = plane.state([])
        #expect(state.topic == "fleet/demo/vehicles/bus-7/state" && state.retain)
        #expect(try json(state.payload)["conditions"] as? Int == 0)

        let page = plane.stateDetail(Array(#"{"page":1}"#.utf8))
        #expect(page.topic == "fleet/demo/vehicles/bus-7/state/detail" && !page.retain)
        #expect(page.payload == Array(#"{"page":1}"#.utf8))
    }

    @Test func anErrorSaysWhatWasRefusedAndIsNotKept() throws {
        let error = plane.error(.geofence, about: "fleet/demo/geofences/depot", identifier: "depot", reason: "no type")
        #expect(error.topic == "fleet/demo/vehicles/bus-7/errors" && !error.retain)
        let body = try json(error.payload)
        #expect(body["kind"] as? String == "geofence")
        #expect(body["topic"] as? String == "fleet/demo/geofences/depot")
        #expect(body["identifier"] as? String == "depot" && body["reason"] as? String == "no type")
        #expect(body["vehicle"] as? String == "bus-7")
    }
}
