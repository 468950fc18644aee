import Foundation
import GeofenceCore

/// One place as a lookup reads it: everything a placemark needs but the text, in one record so that a
/// placemark costs one cache miss rather than one per field.
struct PlaceRecord: Sendable {
    var latitudeMicro: Int32
    var longitudeMicro: Int32
    var population: UInt32
    /// Where the place's name, first- and second-level area names lie in the strings, one after another.
    var text: UInt32
    var country: UInt16
    var zone: UInt16
}

extension PlaceRecord {
    var coordinate: Coordinate { Coordinate(latitude: Double(latitudeMicro) / 1e6, longitude: Double(longitudeMicro) / 1e6) }
}

/// GeoNames' places of 1,000 people or more, their names and alternate names, and Natural Earth's country
/// outlines, held in flat arrays much as the file lays them out: loading is a read and a few copies.
/// Immutable once built, so one gazetteer serves any number of lookups at once.
public struct Gazetteer: Sendable {
    /// Places, in implicit k-d tree order (see `KDTree`).
    let places: [PlaceRecord]
    /// Each place's country alone, for the nearest search within a country.
    let countryIndex: [UInt16]
    /// Each place's position on the ellipsoid (ECEF, centimetres, from the file), for nearest-place search.
    let tree: KDTree
    /// Name hash (top bits) and place (low bits), ascending.
    let keys: [UInt64]
    let countryCodes: [String]
    let countryNames: [String]
    /// Each country's ISO code and name as name keys, for qualifiers.
    let countryKeys: [(code: String, name: String)]
    let zoneNames: [String]
    let strings: [UInt8]
    /// Country outlines in pieces, each tagged with its country's index.
    let outlines: CountryOutlines

    /// The places' count.
    public var count: Int { places.count }

    /// Reads a gazetteer from the bytes of its file (an array or `Data`).
    public init(fileBytes: some ContiguousBytes) throws(GeocodingError) {
        do {
            // withUnsafeBytes rethrows untyped, so the typed error comes out as a result.
            self = try fileBytes.withUnsafeBytes { bytes in
                Result { () throws(GazetteerFormat.Invalid) in try Self(reading: GazetteerFormat.Reader(bytes)) }
            }.get()
        } catch {
            throw .dataNotLoaded(error.description)
        }
    }

    private init(reading r: GazetteerFormat.Reader) throws(GazetteerFormat.Invalid) {
        let placeCount = Int(r.u32(at: 8)), keyCount = Int(r.u32(at: 12)), countries = Int(r.u32(at: 16))
        let rings = Int(r.u32(at: 20)), vertexCount = Int(r.u32(at: 24)), zones = Int(r.u32(at: 28)), stringBytes = Int(r.u32(at: 32))
        guard placeCount < 1 << GazetteerFormat.idBits else { throw .init(description: "the gazetteer holds \(placeCount) places, more than its keys can name") }
        var at = GazetteerFormat.headerSize
        let latitudes: [Int32], longitudes: [Int32], population: [UInt32], text: [UInt32], zone: [UInt16], positions: [Int32]
        (latitudes, at) = try r.array(Int32.self, at: at, count: placeCount)
        (longitudes, at) = try r.array(Int32.self, at: at, count: placeCount)
        (population, at) = try r.array(UInt32.self, at: at, count: placeCount)
        (text, at) = try r.array(UInt32.self, at: at, count: placeCount)
        (countryIndex, at) = try r.array(UInt16.self, at: at, count: placeCount)
        (zone, at) = try r.array(UInt16.self, at: at, count: placeCount)
        (positions, at) = try r.array(Int32.self, at: at, count: 3 * placeCount)
        (keys, at) = try r.array(UInt64.self, at: at, count: keyCount)
        let codeBytes: [UInt8], countryNameOffsets: [UInt32], countryRings: [UInt32], ringStarts: [UInt32], vertices: [Int32], zoneOffsets: [UInt32]
        (codeBytes, at) = try r.array(UInt8.self, at: at, count: 2 * countries)
        (countryNameOffsets, at) = try r.array(UInt32.self, at: at, count: countries)
        (countryRings, at) = try r.array(UInt32.self, at: at, count: 2 * countries)
        (ringStarts, at) = try r.array(UInt32.self, at: at, count: rings)
        (vertices, at) = try r.array(Int32.self, at: at, count: 2 * vertexCount)
        (zoneOffsets, at) = try r.array(UInt32.self, at: at, count: zones)
        (strings, _) = try r.array(UInt8.self, at: at, count: stringBytes)

        let stringsCopy = strings
        func interned(_ offset: UInt32) -> String { Self.string(stringsCopy, offset) ?? "" }
        countryCodes = (0..<countries).map { String(decoding: codeBytes[(2 * $0)..<(2 * $0 + 2)], as: UTF8.self) }
        countryNames = countryNameOffsets.map(interned)
        countryKeys = zip(countryCodes, countryNames).map { (NameKey.normalized($0), NameKey.normalized($1)) }
        // Indices the lookups follow without checks: a file that breaks them is refused here.
        guard countryIndex.allSatisfy({ Int($0) < countries }), zone.allSatisfy({ Int($0) < zones }),
              keys.allSatisfy({ Int($0 & ((1 << UInt64(GazetteerFormat.idBits)) - 1)) < placeCount }) else {
            throw .init(description: "the gazetteer names a country, time zone or place it does not hold")
        }
        // A place's three strings are read without checks: each must end inside the strings.
        let allStrings = strings
        guard text.allSatisfy({ Self.stringsEnd(allStrings, from: Int($0), count: 3) != nil }) else {
            throw .init(description: "a place's names run past the gazetteer's strings")
        }
        zoneNames = zoneOffsets.map(interned)
        let placeCountries = countryIndex
        places = (0..<placeCount).map { i in
            PlaceRecord(latitudeMicro: latitudes[i], longitudeMicro: longitudes[i], population: population[i],
                        text: text[i], country: placeCountries[i], zone: zone[i])
        }
        tree = KDTree(centimetres: positions)
        outlines = try Self.outlines(countryRings: countryRings, ringStarts: ringStarts, vertices: vertices)
    }

    /// One polygon region per piece of a country's outline (an outer ring and its holes, as the file groups
    /// them), indexed.
    private static func outlines(countryRings: [UInt32], ringStarts: [UInt32], vertices: [Int32]) throws(GazetteerFormat.Invalid) -> CountryOutlines {
        var pieces: [(region: Region, country: Int)] = []
        let vertexCount = vertices.count / 2
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
                let coordinates = (start..<stop).map { v in
                    Coordinate(latitude: Double(vertices[2 * v + 1]) / 1e6, longitude: Double(vertices[2 * v]) / 1e6)
                }
                if isHole, !parts.isEmpty { parts[parts.count - 1].append(coordinates) } else { parts.append([coordinates]) }
            }
            for part in parts { pieces.append((.trustedPolygon(parts: [part]), country)) }
        }
        return CountryOutlines(pieces: pieces)
    }

    static func string(_ strings: [UInt8], _ offset: UInt32) -> String? {
        guard offset != GazetteerFormat.none, Int(offset) + 2 <= strings.count else { return nil }
        let o = Int(offset)
        let length = Int(strings[o]) | Int(strings[o + 1]) << 8
        guard o + 2 + length <= strings.count else { return nil }
        return String(decoding: strings[(o + 2)..<(o + 2 + length)], as: UTF8.self)
    }

    /// Where `count` strings from `offset` end, if they all lie inside `strings`.
    static func stringsEnd(_ strings: [UInt8], from offset: Int, count: Int) -> Int? {
        var o = offset
        for _ in 0..<count {
            guard o + 2 <= strings.count else { return nil }
            o += 2 + (Int(strings[o]) | Int(strings[o + 1]) << 8)
        }
        return o <= strings.count ? o : nil
    }

    /// A place's name and its areas' names (nil where it has none).
    func names(of record: PlaceRecord) -> (name: String, admin1: String?, admin2: String?) {
        strings.withUnsafeBufferPointer { bytes in
            var o = Int(record.text)
            func next() -> String {
                let length = Int(bytes[o]) | Int(bytes[o + 1]) << 8
                defer { o += 2 + length }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[(o + 2)..<(o + 2 + length)]), as: UTF8.self)
            }
            let name = next(), admin1 = next(), admin2 = next()
            return (name, admin1.isEmpty ? nil : admin1, admin2.isEmpty ? nil : admin2)
        }
    }

    func coordinate(of place: Int) -> Coordinate {
        places[place].coordinate
    }

    /// The placemark of a place, with its country named only when `countryKnown`.
    func placemark(_ place: Int, distance: Double?, countryKnown: Bool = true) -> Placemark {
        let record = places[place]
        let (name, admin1, admin2) = names(of: record)
        let country = Int(record.country), zone = zoneNames[Int(record.zone)]
        return Placemark(
            name: name, locality: name,
            subAdministrativeArea: admin2,
            administrativeArea: admin1,
            isoCountryCode: countryKnown ? countryCodes[country] : nil,
            country: countryKnown ? countryNames[country] : nil,
            timeZoneIdentifier: zone.isEmpty ? nil : zone,
            location: record.coordinate, population: Int(record.population), distance: distance)
    }
}
