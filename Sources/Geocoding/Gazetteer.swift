import Dispatch
import Foundation
import GeofenceCore
import Synchronization

/// GeoNames' places of 1,000 people or more, their names and alternate names, and Natural Earth's country
/// outlines, held in flat arrays as the file lays them out: loading is an inflate and a few copies.
/// Immutable once built, so one gazetteer serves any number of lookups at once.
public struct Gazetteer: Sendable {
    // Places, in implicit k-d tree order (see `KDTree`).
    let latitudeMicro: [Int32]
    let longitudeMicro: [Int32]
    let population: [UInt32]
    let nameOffset: [UInt32]
    let admin1Offset: [UInt32]
    let admin2Offset: [UInt32]
    let countryIndex: [UInt16]
    let zoneIndex: [UInt16]
    /// Each place's position on the ellipsoid (ECEF, metres), for nearest-place search.
    let tree: KDTree
    /// Name hash (top bits) and place (low bits), ascending.
    let keys: [UInt64]
    let countryCodes: [String]
    let countryNames: [String]
    /// Each country's ISO code and name as name keys, for qualifiers.
    let countryKeys: [(code: String, name: String)]
    let zoneNames: [String]
    let strings: [UInt8]
    /// Country outlines in pieces, in a few sets built side by side, each piece tagged with its country's index.
    let outlines: [ConditionSet]
    let outlineCountry: [[Int]]

    /// The places' count.
    public var count: Int { latitudeMicro.count }

    /// Reads a gazetteer from the bytes of its file.
    public init(fileBytes: [UInt8]) throws(GeocodingError) {
        do {
            try self.init(inflated: try GazetteerFormat.inflate(fileBytes))
        } catch {
            throw .dataNotLoaded(error.description)
        }
    }

    private init(inflated bytes: [UInt8]) throws(GazetteerFormat.Invalid) {
        let r = GazetteerFormat.Reader(bytes)
        guard bytes.count >= 40, Array(bytes[0..<4]) == GazetteerFormat.magic else { throw .init(description: "the gazetteer's contents have no header") }
        let places = Int(r.u32(at: 8)), keyCount = Int(r.u32(at: 12)), countries = Int(r.u32(at: 16))
        let rings = Int(r.u32(at: 20)), vertices = Int(r.u32(at: 24)), zones = Int(r.u32(at: 28)), stringBytes = Int(r.u32(at: 32))
        guard places < 1 << GazetteerFormat.idBits else { throw .init(description: "the gazetteer holds \(places) places, more than its keys can name") }
        var at = 40
        (latitudeMicro, at) = try r.array(Int32.self, at: at, count: places)
        (longitudeMicro, at) = try r.array(Int32.self, at: at, count: places)
        (population, at) = try r.array(UInt32.self, at: at, count: places)
        (nameOffset, at) = try r.array(UInt32.self, at: at, count: places)
        (admin1Offset, at) = try r.array(UInt32.self, at: at, count: places)
        (admin2Offset, at) = try r.array(UInt32.self, at: at, count: places)
        (countryIndex, at) = try r.array(UInt16.self, at: at, count: places)
        (zoneIndex, at) = try r.array(UInt16.self, at: at, count: places)
        (keys, at) = try r.array(UInt64.self, at: at, count: keyCount)
        let codeBytes: [UInt8], countryNameOffsets: [UInt32], countryRings: [UInt32], ringStarts: [UInt32], steps: [Int32], zoneOffsets: [UInt32]
        (codeBytes, at) = try r.array(UInt8.self, at: at, count: 2 * countries)
        (countryNameOffsets, at) = try r.array(UInt32.self, at: at, count: countries)
        (countryRings, at) = try r.array(UInt32.self, at: at, count: 2 * countries)
        (ringStarts, at) = try r.array(UInt32.self, at: at, count: rings)
        (steps, at) = try r.array(Int32.self, at: at, count: 2 * vertices)
        (zoneOffsets, at) = try r.array(UInt32.self, at: at, count: zones)
        (strings, _) = try r.array(UInt8.self, at: at, count: stringBytes)

        let stringsCopy = strings
        func text(_ offset: UInt32) -> String { Self.string(stringsCopy, offset) ?? "" }
        countryCodes = (0..<countries).map { String(decoding: codeBytes[(2 * $0)..<(2 * $0 + 2)], as: UTF8.self) }
        countryNames = countryNameOffsets.map(text)
        countryKeys = zip(countryCodes, countryNames).map { (NameKey.normalized($0), NameKey.normalized($1)) }
        // Indices the lookups follow without checks: a file that breaks them is refused here.
        guard countryIndex.allSatisfy({ Int($0) < countries }), zoneIndex.allSatisfy({ Int($0) < zones }),
              keys.allSatisfy({ Int($0 & ((1 << UInt64(GazetteerFormat.idBits)) - 1)) < places }) else {
            throw .init(description: "the gazetteer names a country, time zone or place it does not hold")
        }
        zoneNames = zoneOffsets.map(text)
        tree = KDTree(latitudeMicro: latitudeMicro, longitudeMicro: longitudeMicro)
        (outlines, outlineCountry) = try Self.outlines(countryRings: countryRings, ringStarts: ringStarts, steps: steps)
    }

    /// One polygon region per piece of a country's outline (an outer ring and its holes, as the file groups
    /// them), indexed in two sets built at once on two threads: the index's cell masks are most of the load.
    private static func outlines(countryRings: [UInt32], ringStarts: [UInt32], steps: [Int32]) throws(GazetteerFormat.Invalid) -> ([ConditionSet], [[Int]]) {
        var regions: [Region] = [], owners: [Int] = []
        let vertexCount = steps.count / 2
        for country in 0..<(countryRings.count / 2) {
            let first = Int(countryRings[2 * country]), end = Int(countryRings[2 * country + 1])
            guard first < end else { continue }
            guard end <= ringStarts.count else { throw .init(description: "country \(country)'s rings run past the ring table") }
            // Each piece (a tile of the outline with its holes) is a region of its own, so that the index holds
            // it on a fine level.
            var parts: [[[Coordinate]]] = []
            for ring in first..<end {
                let start = Int(ringStarts[ring] & 0x7FFF_FFFF), isHole = ringStarts[ring] & 0x8000_0000 != 0
                let stop = ring + 1 < ringStarts.count ? Int(ringStarts[ring + 1] & 0x7FFF_FFFF) : vertexCount
                guard start < stop, stop <= vertexCount else { throw .init(description: "ring \(ring) has no vertices in range") }
                var x: Int32 = 0, y: Int32 = 0
                var coordinates: [Coordinate] = []
                coordinates.reserveCapacity(stop - start)
                for v in start..<stop {
                    x &+= steps[2 * v]; y &+= steps[2 * v + 1]
                    coordinates.append(Coordinate(latitude: Double(y) / 1e6, longitude: Double(x) / 1e6))
                }
                if isHole, !parts.isEmpty { parts[parts.count - 1].append(coordinates) } else { parts.append([coordinates]) }
            }
            for part in parts {
                regions.append(.trustedPolygon(parts: [part]))
                owners.append(country)
            }
        }
        let pieces = regions
        let halves = [0..<(pieces.count / 2), (pieces.count / 2)..<pieces.count]
        let built = Mutex<[Int: ConditionSet]>([:])
        DispatchQueue.concurrentPerform(iterations: halves.count) { k in
            let set = ConditionSet(Array(pieces[halves[k]]))
            built.withLock { $0[k] = set }
        }
        let sets = built.withLock { all in halves.indices.map { all[$0]! } }
        return (sets, halves.map { Array(owners[$0]) })
    }

    static func string(_ strings: [UInt8], _ offset: UInt32) -> String? {
        guard offset != GazetteerFormat.none, Int(offset) + 2 <= strings.count else { return nil }
        let o = Int(offset)
        let length = Int(strings[o]) | Int(strings[o + 1]) << 8
        guard o + 2 + length <= strings.count else { return nil }
        return String(decoding: strings[(o + 2)..<(o + 2 + length)], as: UTF8.self)
    }

    func coordinate(of place: Int) -> Coordinate {
        Coordinate(latitude: Double(latitudeMicro[place]) / 1e6, longitude: Double(longitudeMicro[place]) / 1e6)
    }

    /// The placemark of a place, with its country named only when `countryKnown`.
    func placemark(_ place: Int, distance: Double?, countryKnown: Bool = true) -> Placemark {
        let name = Self.string(strings, nameOffset[place]) ?? ""
        let country = Int(countryIndex[place])
        return Placemark(
            name: name, locality: name,
            subAdministrativeArea: Self.string(strings, admin2Offset[place]),
            administrativeArea: Self.string(strings, admin1Offset[place]),
            isoCountryCode: countryKnown ? countryCodes[country] : nil,
            country: countryKnown ? countryNames[country] : nil,
            timeZoneIdentifier: zoneNames[Int(zoneIndex[place])].isEmpty ? nil : zoneNames[Int(zoneIndex[place])],
            location: coordinate(of: place), population: Int(population[place]), distance: distance)
    }
}
