import Foundation
import GeofenceCore

extension Gazetteer {
    /// How far from a country's outline its 1:10m border may be wrong: near a border, the places decide.
    static let borderUncertainty = 2_000.0

    /// The territorial sea, 12 nautical miles. A point that no outline holds (the coasts are simplified to
    /// about 1 km, so a coastal city's edge can fall outside them) takes the country of its nearest place
    /// when that place is this close: a place is on land, so the point is on land or in that country's waters.
    static let territorialSea = 22_224.0

    /// A place in the outline's country is taken instead of the nearest place only when it is no farther
    /// than this many times the nearest's distance, plus `sameLandSlack`. Outlines hold overseas parts
    /// (France's holds Réunion) whose places GeoNames codes apart (RE): the nearest place coded FR is then
    /// thousands of kilometres away, and the nearest place, with its own code, is the answer.
    static let sameLandFactor = 10.0
    static let sameLandSlack = 50_000.0

    /// The country whose outline holds the point, if any: from the clean-cell grid when no border touches
    /// the point's cell, else from the outlines.
    func country(at point: PreparedPoint) -> Int? {
        switch cleanCell(point.coordinate) {
        case .some(let holder): holder
        case .none: outlines.country(at: point)
        }
    }

    /// What the grid knows of the point's cell: nil when a border touches it, else the country that holds
    /// all of it (nil inside: none does).
    @inline(__always)
    func cleanCell(_ c: Coordinate) -> Int?? {
        let column = min(Int((c.longitude + 180) / GazetteerFormat.gridDegrees), GazetteerFormat.gridColumns - 1)
        let row = min(Int((c.latitude + 90) / GazetteerFormat.gridDegrees), GazetteerFormat.gridRows - 1)
        let cell = cleanCells.withUnsafeBufferPointer { $0[row * GazetteerFormat.gridColumns + column] }
        switch cell {
        case 0: return nil
        case 1: return .some(nil)
        default: return .some(Int(cell) - 2)
        }
    }

    /// Whether another country's outline, or the sea, lies within `borderUncertainty` of the point: probed
    /// at that distance in eight directions.
    func isNearBorder(_ coordinate: Coordinate, of country: Int) -> Bool {
        let north = Self.borderUncertainty / 111_000
        let east = north / max(cos(coordinate.latitude * .pi / 180), 0.01)
        for k in 0..<8 {
            let angle = Double(k) * .pi / 4
            let probe = Coordinate(
                latitude: min(max(coordinate.latitude + north * cos(angle), -90), 90),
                longitude: remainder(coordinate.longitude + east * sin(angle), 360))
            if self.country(at: PreparedPoint(probe)) != country { return true }
        }
        return false
    }

    /// The nearest place, preferring one in the country whose outline holds the point unless that one is
    /// much farther than the nearest (an overseas part); outside every outline, the nearest place anywhere,
    /// with its country only within its territorial sea (12 nautical miles).
    ///
    /// Natural Earth's 1:10m borders are off by up to a kilometre or two where they follow a river (the
    /// Oder at Görlitz, the Narva), which would give a town on the bank the country across. So within
    /// `borderUncertainty` of its country's outline, the point takes the nearest place whichever side it is on.
    ///
    /// Most points skip the outline test: a point within the nearest place's clearance (the builder's
    /// distance from it to the nearest border or coast) lies in the same outline as the place, and a point
    /// in a grid cell no border touches lies in the cell's.
    public func reverse(_ coordinate: Coordinate) throws(GeocodingError) -> Placemark {
        try reverse(coordinate, usingShortcuts: true)
    }

    /// `reverse`, with the shortcuts or with every outline tested: the tests check they agree.
    func reverse(_ coordinate: Coordinate, usingShortcuts: Bool) throws(GeocodingError) -> Placemark {
        guard coordinate.isValid else {
            throw .invalidCoordinate(latitude: coordinate.latitude, longitude: coordinate.longitude)
        }
        guard count > 0 else { throw .noMatch("\(coordinate.latitude), \(coordinate.longitude)") }
        let q = PreparedPoint.earthCentred(coordinate)
        var found = tree.nearest(to: q, where: PrefetchingCards(cards: places))!
        let nearest = places[found.index]
        let clearance = nearest.clearanceMetres * 100
        let holder: Int?
        if usingShortcuts, found.chordSquared < clearance * clearance {
            // Within the clearance, the place's own outline (or none) holds the point, and the place is
            // already the nearest in it: nothing below would change the answer.
            holder = nearest.isOutsideOutlines ? nil : Int(nearest.country)
        } else if usingShortcuts {
            holder = country(at: PreparedPoint(coordinate))
        } else {
            holder = outlines.country(at: PreparedPoint(coordinate))
        }
        if let holder, Int(nearest.country) != holder, !isNearBorder(coordinate, of: holder) {
            // Through a buffer, so that the filter neither copies nor retains the gazetteer per node.
            let inCountry = countryIndex.withUnsafeBufferPointer { countries in
                tree.nearest(to: q, where: InCountry(countries: countries, country: UInt16(holder)))
            }
            let bound = Self.sameLandFactor * found.chordSquared.squareRoot() + Self.sameLandSlack * 100
            if let inCountry, inCountry.chordSquared <= bound * bound { found = inCountry }
        }
        // Outside every outline, the nearest place's country when the point is within its territorial sea.
        let territorial = Self.territorialSea * 100
        let countryKnown = holder != nil || found.chordSquared <= territorial * territorial
        // The chord is to the place's position rounded to the centimetre, as the tree holds it: the distance
        // is good to about a centimetre.
        let chord = found.chordSquared.squareRoot() / 100
        let distance =
            Geodesic.distance(chord: chord, atLatitude: coordinate.latitude)
            ?? Geodesic.distance(coordinate, self.coordinate(of: found.index))
        return placemark(found.index, distance: distance, countryKnown: countryKnown)
    }

    /// Places whose name or alternate name is `name`, with every qualifier matching the place's country (ISO
    /// code or name), first- or second-level administrative area; most populous first.
    public func forward(_ query: String, region hint: String? = nil, limit: Int = 10) throws(GeocodingError)
        -> [Placemark]
    {
        let parts = query.split(separator: ",").map { NameKey.normalized(String($0)) }.filter { !$0.isEmpty }
        guard let first = parts.first else { throw .emptyQuery }
        let qualifiers = Array(parts.dropFirst()) + (hint.map { [NameKey.normalized($0)] } ?? []).filter { !$0.isEmpty }
        let hash = NameKey.hash(ofKey: first)
        var found: [Int] = []
        let low = hash << UInt64(GazetteerFormat.idBits)
        var i = lowerBound(low)
        let idMask: UInt64 = (1 << UInt64(GazetteerFormat.idBits)) - 1
        while i < keys.count, keys[i] >> UInt64(GazetteerFormat.idBits) == hash {
            let place = Int(keys[i] & idMask)
            if qualifiers.allSatisfy({ matches(place, $0) }) { found.append(place) }
            i += 1
        }
        guard !found.isEmpty else { throw .noMatch(query) }
        found.sort {
            places[$0].population != places[$1].population ? places[$0].population > places[$1].population : $0 < $1
        }
        return found.prefix(max(limit, 1)).map { placemark($0, distance: nil) }
    }

    private func lowerBound(_ key: UInt64) -> Int {
        var lo = 0
        var hi = keys.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Whether a normalized qualifier names the place's country (ISO code or name) or one of its areas.
    private func matches(_ place: Int, _ qualifier: String) -> Bool {
        let record = places[place]
        let country = countryKeys[Int(record.country)]
        if country.code == qualifier || country.name == qualifier { return true }
        let names = names(of: place)
        for area in [names.admin1, names.admin2] {
            if let area, NameKey.normalized(area) == qualifier { return true }
        }
        return false
    }
}

/// Every place, with the card of the best so far asked of the cache after each scanned range, so that
/// the placemark's one miss overlaps the rest of the search.
struct PrefetchingCards: PointFilter {
    let cards: PlaceCards
    @inline(__always) func accepts(_ point: Int) -> Bool { true }
    @inline(__always) func scannedLeaf(best: Int) { cards.prefetch(best) }
}

/// Places of one country.
struct InCountry: PointFilter {
    let countries: UnsafeBufferPointer<UInt16>
    let country: UInt16
    @inline(__always) func accepts(_ point: Int) -> Bool { countries[point] == country }
}

extension Gazetteer {
    /// The distance to the nearest place by testing every one (in a country, when given): the baseline
    /// the tree is checked against.
    func nearestByScan(_ coordinate: Coordinate, inCountry code: String?) -> Double {
        let q = PreparedPoint(coordinate).earthCentred
        var best = -1
        var bestChord = Double.infinity
        for place in 0..<count where code == nil || countryCodes[Int(countryIndex[place])] == code {
            let d = tree.chordSquared(place, q)
            if d < bestChord {
                best = place
                bestChord = d
            }
        }
        return best < 0 ? .infinity : Geodesic.distance(coordinate, self.coordinate(of: best))
    }
}

extension Gazetteer {
    /// The country whose outline holds the point (ISO code), if any: no place is looked at.
    public func isoCountryCode(at coordinate: Coordinate) -> String? {
        country(at: PreparedPoint(coordinate)).map { countryCodes[$0] }
    }

    /// The place at a position of the file's order (0 ..< `count`).
    public func place(_ index: Int) -> Placemark { placemark(index, distance: nil) }
}
