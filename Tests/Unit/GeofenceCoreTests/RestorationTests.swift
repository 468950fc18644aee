import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// A restore puts records back part by part (`MonitorEngine.Restoration`), moving what the store's decoding
/// threads made instead of copying it, and the decoder reads a one-ring polygon straight into its region.
/// Both must leave exactly what the plain paths leave.
@Suite(.offTheCooperativePool(.computing)) struct RestorationTests {
    static let origin = Coordinate(latitude: 45.8, longitude: 15.97)

    /// Records as a store keeps them: unknown; satisfied, some with a dwell still due; unsatisfied with a last
    /// event; some with rules. Identifiers repeat, as a part may replace what an earlier one restored.
    static func records(_ rng: inout SplitMix64, count: Int) -> [(identifier: String, record: MonitorRecord)] {
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        return (0..<count).map { k in
            let centre = scattered(around: origin, within: 3_000, &rng)
            let radius = Double.random(in: 30...800, using: &rng)
            let rules: ConditionRules =
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: ConditionRules(expires: start.addingTimeInterval(Double.random(in: 10...400, using: &rng)))
                case 1: ConditionRules(notify: [.enter])
                default: ConditionRules()
                }
            let geometry: ConditionGeometry =
                Bool.random(using: &rng)
                ? .circle(center: centre, radius: radius)
                : .polygon(parts: [
                    [
                        [
                            offset(centre, metres: radius, bearing: 0), offset(centre, metres: radius, bearing: 120),
                            offset(centre, metres: radius, bearing: 240), offset(centre, metres: radius, bearing: 0),
                        ]
                    ]
                ])
            let dwell = Bool.random(using: &rng) ? Double.random(in: 5...100, using: &rng) : nil
            let condition = try! Condition(geometry: geometry, name: "fence \(k)", dwell: dwell, rules: rules)
            let identifier = "c\(Int.random(in: 0..<(count * 4 / 5), using: &rng))"
            var record = MonitorRecord(condition: condition)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: break
            case 1:
                record.state = .satisfied
                record.since = start
                record.dwellReported = Bool.random(using: &rng)
            default:
                record.state = .unsatisfied
                record.since = start
                record.lastEvent = MonitorEvent(
                    identifier: identifier, kind: .exit, state: .unsatisfied, date: start,
                    location: fix(centre.latitude, centre.longitude, t: 0), conditionName: condition.name)
            }
            return (identifier, record)
        }
    }

    /// What an engine holds and does: its records' states, then the events of a drive through the fences.
    static func behaviour(of engine: MonitorEngine, _ rng: inout SplitMix64) -> [String] {
        var engine = engine
        var out = engine.records.map { "\($0.identifier) \($0.record.state) \(String(describing: $0.record.since))" }
        var position = origin
        for k in 0..<150 {
            position = offset(
                position, metres: Double.random(in: 0...60, using: &rng),
                bearing: Double.random(in: 0..<360, using: &rng))
            for event in engine.process(fix(position.latitude, position.longitude, t: Double(k) * 3)).events {
                out.append("\(k) \(event.identifier) \(event.kind) \(event.state)")
            }
        }
        return out
    }

    @Test func aRestoreInPartsLeavesWhatOneRecordAtATimeLeaves() async {
        await propertyCheck(count: 25, input: Gen.int(in: 0...Int(Int32.max))) { seed in
            var rng = SplitMix64(seed: UInt64(seed))
            let restored = Self.records(&rng, count: 400)
            // Some conditions are there before the restore, a few of them under identifiers it brings back.
            var before = MonitorEngine(name: "m", configuration: .eachFixAlone)
            for (identifier, record) in Self.records(&rng, count: 40) {
                before.add(record.condition, identifier: identifier == "c1" ? "c1" : "x" + identifier)
            }
            var oneByOne = before
            for (identifier, record) in restored { oneByOne.restore(record, identifier: identifier) }

            var restoration = MonitorEngine.Restoration(before, expecting: restored.count)
            var rest = restored[...]
            while !rest.isEmpty {
                var part = MonitorEngine.RestoredRecords()
                for (identifier, record) in rest.prefix(Int.random(in: 1...120, using: &rng)) {
                    part.append(identifier: identifier, record: record)
                }
                rest = rest.dropFirst(part.count)
                restoration.add(consume part)
            }
            let floor: Int? = Bool.random(using: &rng) ? Int.random(in: 0..<SpatialIndex.levelCount, using: &rng) : nil
            var parted = restoration.finish(indexFloor: floor, refineIndexLater: Bool.random(using: &rng))
            if let work = parted.indexRefinementWork(), Bool.random(using: &rng) {
                let adopted = parted.adoptIndexRefinement(work()!)
                #expect(adopted)
            }

            #expect(parted.records.map(\.identifier) == oneByOne.records.map(\.identifier))
            #expect(parted.records.map(\.record) == oneByOne.records.map(\.record))
            var drive = SplitMix64(seed: UInt64(seed) &+ 1)
            var again = drive
            let expected = Self.behaviour(of: oneByOne, &again)
            #expect(Self.behaviour(of: parted, &drive) == expected)
            // The drive decides some fences, and some restored records were replaced by later ones.
            #expect(expected.count > oneByOne.count + 5)
            #expect(oneByOne.count < restored.count + 40)
        }
    }

    /// Rings of every size and place, across the antimeridian too (`SpatialIndexTests.conditions`).
    @Test func aOneRingPolygonDecodesToTheRegionTheGeneralPathPrepares() {
        var polygons = 0
        for condition in SpatialIndexTests.conditions(seed: 77, count: 3_000) {
            guard case .polygon(let parts) = condition.geometry else { continue }
            polygons += 1
            let decoded = try! ConditionCodec.decode(ConditionCodec.encode(condition))
            let general = Condition(
                trustedGeometry: .polygon(parts: parts), name: nil, dwell: nil, version: nil, minimumDuration: nil)
            guard case .polygon(let fast) = decoded.region, case .polygon(let slow) = general.region else {
                Issue.record("not a polygon")
                continue
            }
            #expect(fast.vertices == slow.vertices)
            #expect(fast.boundingBox == slow.boundingBox)
            #expect(fast.isSimple && slow.isSimple)
            #expect(decoded == condition)
        }
        #expect(polygons > 1_000)
    }

    @Test func aCorruptOneRingPolygonIsRefusedWithItsReason() {
        let square = try! Condition(
            geometry: .polygon(parts: [
                [
                    [
                        Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1),
                        Coordinate(latitude: 1, longitude: 1), Coordinate(latitude: 0, longitude: 0),
                    ]
                ]
            ]))
        let bytes = ConditionCodec.encode(square)
        #expect(throws: ConditionCodec.DecodingError.self) { try ConditionCodec.decode(Array(bytes.dropLast(8))) }
        #expect(throws: ConditionCodec.DecodingError.self) { try ConditionCodec.decode(bytes + [0]) }
        var badLatitude = bytes
        // The first vertex's latitude: the geometry's tag, two counts, then latitude before longitude.
        let first = bytes.count - 4 * 16
        withUnsafeBytes(of: (123.0).bitPattern.littleEndian) {
            badLatitude.replaceSubrange(first..<first + 8, with: $0)
        }
        do throws(ConditionCodec.DecodingError) {
            _ = try ConditionCodec.decode(badLatitude)
            Issue.record("a latitude of 123 was accepted")
        } catch {
            #expect(error.description.contains("out of range"))
        }
    }
}
