import AgentOutputs
import AgentTestSupport
import GeofenceAgent
import GeofenceStore
import TestSupport
import Testing

/// One message on a geofence topic: its id is the topic's last level (docs/topics.md#geofences).
@Suite(.offTheCooperativePool(.computing)) struct GeofenceMessageTests {
    static let circle = #""geometry":{"type":"Point","coordinates":[5.3,52.8]},"properties":{"radius":50}"#

    func identifier(_ payload: String, topic: String = "fleet/demo/geofences/depot") -> Result<
        String, GeofenceMessage.Refusal
    > {
        GeofenceMessage.change(topic: topic, payload: Array(payload.utf8)).map { change in
            if case .put(let input) = change { return input.identifier } else { return "removed" }
        }
    }

    @Test func aFeatureWithoutAnIdIsNamedByItsTopic() throws {
        #expect(try identifier(#"{"type":"Feature",\#(Self.circle)}"#).get() == "depot")
        #expect(try identifier(#"{"type":"Feature","id":null,\#(Self.circle)}"#).get() == "depot")
        #expect(try identifier(#"{"type":"Feature","id":"depot",\#(Self.circle)}"#).get() == "depot")
        #expect(try identifier("", topic: "fleet/demo/geofences/depot").get() == "removed")
    }

    @Test func anIdOtherThanTheTopicsIsRefused() {
        if case .failure(let refusal) = identifier(#"{"type":"Feature","id":"yard",\#(Self.circle)}"#) {
            #expect(refusal.reason == "the feature's id 'yard' does not match the topic's last level 'depot'")
        } else {
            Issue.record("another id was accepted")
        }
        // A bad id is still refused with its path, and bad JSON with the decoder's message.
        if case .failure(let refusal) = identifier(#"{"type":"Feature","id":7,\#(Self.circle)}"#) {
            #expect(refusal.reason == "id: id must be a string, found number")
        } else {
            Issue.record("a numeric id was accepted")
        }
        if case .failure(let refusal) = identifier(#"{"type":"Feature""#) {
            #expect(refusal.reason.contains("line 1"), "\(refusal.reason)")
        } else {
            Issue.record("truncated JSON was accepted")
        }
    }
}
