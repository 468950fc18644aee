import GeofenceCore
import PropertyBased
import TestSupport
import Testing

/// The manifest of a geofence set: its digests, its payload, and how a vehicle's holdings differ from it.
@Suite(.offTheCooperativePool(.computing)) struct GeofenceManifestTests {
    @Test func digestsAreFNV1a64AsPublished() {
        // The FNV reference vectors (draft-eastlake-fnv, "FNV-1a 64").
        #expect(GeofenceDigest.of([UInt8]()) == "cbf29ce484222325")
        #expect(GeofenceDigest.of(Array("a".utf8)) == "af63dc4c8601ec8c")
        #expect(GeofenceDigest.of(Array("foobar".utf8)) == "85944171f73967e8")
        #expect(GeofenceDigest.isValid("85944171f73967e8"))
        #expect(!GeofenceDigest.isValid("85944171F73967E8"))
        #expect(!GeofenceDigest.isValid("85944171f73967e"))
    }

    @Test func thePayloadReadsBackAndEqualSetsPublishEqualBytes() throws {
        let manifest = GeofenceManifest(geofences: ["b": "0000000000000002", "a": "0000000000000001"])
        #expect(
            String(decoding: manifest.payload, as: UTF8.self)
                == #"{"count":2,"geofences":{"a":"0000000000000001","b":"0000000000000002"},"type":"GeofenceManifest"}"#
        )
        #expect(try GeofenceManifest.decode(manifest.payload).get() == manifest)
        #expect(try GeofenceManifest.decode([]).get() == nil, "an empty retained message deletes it")
    }

    @Test(arguments: [
        (#"[1]"#, "a manifest is a JSON object, found array"),
        (#"{"type":"Feature","geofences":{}}"#, #"$.type: expected "GeofenceManifest""#),
        (#"{"type":"GeofenceManifest"}"#, "$.geofences: expected an object, found nothing"),
        (#"{"type":"GeofenceManifest","geofences":{"x":"12"}}"#, #"$.geofences["x"]: expected 16 lower-case hex"#),
        (#"{"type":"GeofenceManifest","count":3,"geofences":{}}"#, "$.count: 3 does not match the 0 geofences"),
        (#"{"type":"#, "the manifest is not JSON"),
    ])
    func aBadManifestIsRefusedSayingWhereAndWhy(payload: String, reason: String) {
        guard case .failure(let error) = GeofenceManifest.decode(Array(payload.utf8)) else {
            Issue.record("\(payload) was accepted")
            return
        }
        #expect(error.description.contains(reason), "\(error)")
    }

    @Test func aPushAmendsTheSet() {
        let before = GeofenceManifest(geofences: ["a": "0000000000000001", "b": "0000000000000002"])
        let after = before.applying(published: ["b": "00000000000000bb", "c": "000000000000000c"], deleted: ["a"])
        #expect(after.geofences == ["b": "00000000000000bb", "c": "000000000000000c"])
    }

    @Test func theDifferenceNamesWhatIsMissingDifferentAndNotInIt() {
        let manifest = GeofenceManifest(geofences: [
            "a": "0000000000000001", "b": "0000000000000002", "c": "0000000000000003",
        ])
        let difference = manifest.difference(held: ["b": "00000000000000ff", "c": "0000000000000003", "z": "1"])
        #expect(difference == ManifestDifference(missing: ["a"], different: ["b"], unexpected: ["z"]))
        #expect(difference.summary() == "1 missing (a), 1 different (b), 1 not in the manifest (z)")
        let many = ManifestDifference(missing: (1...7).map { "g\($0)" })
        #expect(many.summary() == "7 missing (g1, g2, g3, g4, g5 and 2 more)")
    }

    /// Whatever the set, a vehicle holding exactly it has no difference, and one that lost k of its
    /// geofences is missing exactly those k.
    @Test func losingGeofencesShowsExactlyThoseAsMissing() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...60), Gen.int(in: 0...60)) { size, lost in
            let geofences = Dictionary(
                uniqueKeysWithValues: (0..<size).map { ("g\($0)", GeofenceDigest.of(Array("\($0)".utf8))) })
            let manifest = GeofenceManifest(geofences: geofences)
            #expect(manifest.difference(held: geofences).isEmpty)
            let gone = Set(geofences.keys.sorted().prefix(lost))
            let held = geofences.filter { !gone.contains($0.key) }
            #expect(manifest.difference(held: held) == ManifestDifference(missing: gone.sorted()))
            #expect((try? GeofenceManifest.decode(manifest.payload).get()) == manifest)
        }
    }
}
