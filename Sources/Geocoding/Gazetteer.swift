import Foundation
import GeofenceCore

/// GeoNames' places of 1,000 people or more, their names and alternate names, and Natural Earth's country
/// outlines. The places' tables are read in place from the file's bytes; only the names of countries, zones
/// and areas and the outlines' index are built at load. Immutable once built, so one gazetteer serves any
/// number of lookups at once.
public struct Gazetteer: Sendable {
    /// Whatever keeps the file's bytes, which the tables below point into.
    private let bytesOwner: AnyObject & Sendable
    /// Places' cards, in implicit k-d tree order (see `KDTree`).
    let places: PlaceCards
    /// Each place's country alone, for the nearest search within a country.
    let countryIndex: GazetteerTable<UInt16>
    /// Each place's position on the ellipsoid (ECEF, centimetres, from the file), for nearest-place search.
    let tree: KDTree
    /// Name hash (top bits) and place (low bits), ascending.
    let keys: GazetteerTable<UInt64>
    let countryCodes: [String]
    let countryNames: [String]
    /// Each country's ISO code and name as name keys, for qualifiers.
    let countryKeys: [(code: String, name: String)]
    let zoneNames: [String]
    /// First- and second-level area names, each once; places name them by index.
    let areaNames: [String]
    let strings: GazetteerTable<UInt8>
    /// The grid of cells no border touches (see `GazetteerFormat`), for points that need no outline test.
    let cleanCells: GazetteerTable<UInt8>
    /// Country outlines in pieces, each tagged with its country's index.
    let outlines: CountryOutlines

    /// The places' count.
    public var count: Int { places.count }

    /// Reads a gazetteer from the bytes of its file (an array or `Data`), copied once into memory of its own.
    public init(fileBytes: some ContiguousBytes) throws(GeocodingError) {
        let copy = fileBytes.withUnsafeBytes { CopiedGazetteerBytes($0) }
        try self.init(bytesIn: copy.bytes, keptBy: copy)
    }

    /// Reads a gazetteer in place from the bytes of its file (a mapping of it, say), which `owner` keeps
    /// alive and unchanged for as long as the gazetteer is used; they must start at an address aligned to
    /// 8 bytes (a card is one cache line when it is 64). Every table is checked here; lookups then read
    /// only the pages they need.
    public init(bytesIn bytes: UnsafeRawBufferPointer, keptBy owner: AnyObject & Sendable) throws(GeocodingError) {
        do {
            try self.init(reading: GazetteerFormat.Reader(bytes), owner: owner)
        } catch {
            throw .dataNotLoaded(error.description)
        }
    }

    private init(reading r: GazetteerFormat.Reader, owner: AnyObject & Sendable) throws(GazetteerFormat.Invalid) {
        bytesOwner = owner
        let file = try GazetteerFormat.Sections(r)
        let placeCount = file.placeCount
        let countries = file.countries
        let zones = file.zoneOffsets.count
        let areas = file.areaOffsets.count
        let codeBytes = file.codeBytes
        let positions = file.positions
        (countryIndex, keys, cleanCells, strings) = (file.countryIndex, file.keys, file.cleanCells, file.strings)
        let stringsCopy = strings
        func interned(_ offset: UInt32) -> String { Self.string(stringsCopy, offset) ?? "" }
        countryCodes = (0..<countries).map { String(decoding: codeBytes[(2 * $0)..<(2 * $0 + 2)], as: UTF8.self) }
        countryNames = file.countryNameOffsets.map(interned)
        countryKeys = zip(countryCodes, countryNames).map { (NameKey.normalized($0), NameKey.normalized($1)) }
        zoneNames = file.zoneOffsets.map(interned)
        areaNames = file.areaOffsets.map(interned)
        places = PlaceCards(file.cards, count: placeCount)
        // Indices the lookups follow without checks: a file that breaks them is refused here.
        guard countryIndex.allSatisfy({ Int($0) < countries }), cleanCells.allSatisfy({ Int($0) < countries + 2 })
        else {
            throw .init(description: "the gazetteer names a country it does not hold")
        }
        guard keys.allSatisfy({ Int($0 & ((1 << UInt64(GazetteerFormat.idBits)) - 1)) < placeCount }) else {
            throw .init(description: "the gazetteer's name keys name a place it does not hold")
        }
        if let place = Self.firstUnsoundCard(places, countries: countries, zones: zones, areas: areas, strings: strings)
        {
            throw .init(
                description:
                    "place \(place)'s card names a country, time zone, area or name the gazetteer does not hold")
        }
        tree = KDTree(centimetres: positions)
        outlines = CountryOutlines(
            pieces: try Self.pieces(file).map { (.trustedPolygon(parts: [$0.rings]), $0.country) })
    }

    /// Natural Earth's country outlines as the file holds them, for drawing: each piece an outer ring and
    /// its holes, with the index of its country.
    public static func outlinePieces(fileBytes: some ContiguousBytes) throws(GeocodingError) -> [(
        rings: [[Coordinate]], country: Int
    )] {
        do {
            return try fileBytes.withUnsafeBytes { bytes in
                Result { () throws(GazetteerFormat.Invalid) in
                    try pieces(GazetteerFormat.Sections(GazetteerFormat.Reader(bytes)))
                }
            }.get()
        } catch {
            throw .dataNotLoaded(error.description)
        }
    }

    /// Each piece of a country's outline (a tile of it: an outer ring and its holes, as the file groups them).
    private static func pieces(_ file: GazetteerFormat.Sections) throws(GazetteerFormat.Invalid) -> [(
        rings: [[Coordinate]], country: Int
    )] {
        let (countryRings, ringStarts, vertices) = (file.countryRings, file.ringStarts, file.vertices)
        var pieces: [(rings: [[Coordinate]], country: Int)] = []
        let vertexCount = vertices.count / 2
        for country in 0..<(countryRings.count / 2) {
            let first = Int(countryRings[2 * country])
            let end = Int(countryRings[2 * country + 1])
            guard first < end else { continue }
            guard end <= ringStarts.count else {
                throw .init(description: "country \(country)'s rings run past the ring table")
            }
            var parts: [[[Coordinate]]] = []
            for ring in first..<end {
                let start = Int(ringStarts[ring] & 0x7FFF_FFFF)
                let isHole = ringStarts[ring] & 0x8000_0000 != 0
                let stop = ring + 1 < ringStarts.count ? Int(ringStarts[ring + 1] & 0x7FFF_FFFF) : vertexCount
                guard start < stop, stop <= vertexCount else {
                    throw .init(description: "ring \(ring) has no vertices in range")
                }
                let coordinates = (start..<stop).map { v in
                    Coordinate(latitude: Double(vertices[2 * v + 1]) / 1e6, longitude: Double(vertices[2 * v]) / 1e6)
                }
                if isHole, !parts.isEmpty {
                    parts[parts.count - 1].append(coordinates)
                } else {
                    parts.append([coordinates])
                }
            }
            // Each piece is a region of its own in the index, so that the index holds it on a fine level.
            pieces += parts.map { ($0, country) }
        }
        return pieces
    }

    static func string(_ strings: GazetteerTable<UInt8>, _ offset: UInt32) -> String? {
        guard offset != GazetteerFormat.none, Int(offset) + 2 <= strings.count else { return nil }
        let o = Int(offset)
        let length = Int(strings[o]) | Int(strings[o + 1]) << 8
        guard o + 2 + length <= strings.count else { return nil }
        return strings.withUnsafeBufferPointer {
            String(decoding: UnsafeBufferPointer(rebasing: $0[(o + 2)..<(o + 2 + length)]), as: UTF8.self)
        }
    }

    /// The first card whose indices or name do not lie inside the tables they index, if any.
    private static func firstUnsoundCard(
        _ places: PlaceCards, countries: Int, zones: Int, areas: Int, strings: GazetteerTable<UInt8>
    ) -> Int? {
        func isSound(_ i: Int) -> Bool {
            let p = places[i]
            guard Int(p.country) < countries, Int(p.zone) < zones,
                p.admin1 == GazetteerFormat.noArea || Int(p.admin1) < areas,
                p.admin2 == GazetteerFormat.noArea || Int(p.admin2) < areas
            else { return false }
            switch places.name(i) {
            case .inline(let bytes):
                return bytes.count <= GazetteerFormat.cardBytes - GazetteerFormat.cardNameOffset - 1
            case .elsewhere(let offset): return string(strings, offset) != nil
            }
        }
        return (0..<places.count).first { !isSound($0) }
    }

    /// A place's name and its areas' names (nil where it has none).
    func names(of place: Int) -> (name: String, admin1: String?, admin2: String?) {
        let record = places[place]
        let name: String =
            switch places.name(place) {
            case .inline(let bytes): String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
            case .elsewhere(let offset): Self.string(strings, offset) ?? ""
            }
        return (name, area(record.admin1), area(record.admin2))
    }

    private func area(_ index: UInt16) -> String? {
        index == GazetteerFormat.noArea ? nil : areaNames[Int(index)]
    }

    func coordinate(of place: Int) -> Coordinate {
        places[place].coordinate
    }

    /// The placemark of a place, with its country named only when `countryKnown`.
    func placemark(_ place: Int, distance: Double?, countryKnown: Bool = true) -> Placemark {
        let record = places[place]
        let (name, admin1, admin2) = names(of: place)
        let country = Int(record.country)
        let zone = zoneNames[Int(record.zone)]
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
