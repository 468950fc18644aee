import GeofenceCore
import TestSupport
import Testing

@testable import AgentJobs

/// What `push` publishes in each mode, and the manifest it leaves.
@Suite(.offTheCooperativePool(.computing)) struct PushPlanTests {
    static let a: [UInt8] = Array(#"{"id":"a"}"#.utf8)
    static let b: [UInt8] = Array(#"{"id":"b"}"#.utf8)
    static let before = GeofenceManifest(geofences: ["a": "0000000000000001", "old": "0000000000000002"])

    @Test func aPushAmendsTheManifestWithWhatItPublished() {
        let plan = PushPlan(.publish, geofences: [("a", Self.a), ("b", Self.b)], manifest: Self.before)
        #expect(plan.messages.map(\.identifier) == ["a", "b"])
        #expect(
            plan.manifest.geofences == [
                "a": GeofenceDigest.of(Self.a), "b": GeofenceDigest.of(Self.b), "old": "0000000000000002",
            ])
    }

    @Test func aDeletionPublishesEmptyMessagesAndTakesThemOut() {
        let plan = PushPlan(.delete, geofences: [("a", Self.a)], manifest: Self.before)
        #expect(plan.messages.map(\.payload) == [[]])
        #expect(plan.manifest.geofences == ["old": "0000000000000002"])
    }

    /// The broker lost b and kept a stale a and a deleted x: the repair publishes a and b, deletes x, and
    /// the file becomes the manifest, whatever the old one said.
    @Test func aRepairPublishesWhatTheBrokerLacksAndDeletesWhatItShouldNotHold() {
        let retained = ["a": "00000000000000aa", "x": "0000000000000009"]
        let plan = PushPlan(
            .repair(retained: retained), geofences: [("a", Self.a), ("b", Self.b)], manifest: Self.before)
        #expect(plan.messages.map(\.identifier) == ["a", "b", "x"])
        #expect(plan.messages.map(\.payload) == [Self.a, Self.b, []])
        #expect(plan.manifest.geofences == ["a": GeofenceDigest.of(Self.a), "b": GeofenceDigest.of(Self.b)])
        let whole = ["a": GeofenceDigest.of(Self.a), "b": GeofenceDigest.of(Self.b)]
        #expect(
            PushPlan(.repair(retained: whole), geofences: [("a", Self.a), ("b", Self.b)], manifest: Self.before)
                .messages.isEmpty, "nothing to publish when the broker holds the file")
    }
}
