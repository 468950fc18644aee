import Foundation
import GeofenceCore

extension Gazetteer {
    /// How far from a country's outline its 1:10m border may be wrong: near a border, the places decide.
    static let borderUncertainty = 2_000.0

    /// The country whose outline holds the point, if any.
    func country(at point: PreparedPoint) -> Int? {
        var found: Int?
        for (set, owners) in zip(outlines, outlineCountry) where found == nil {
            set.forEachContaining(point) { region in
                if found == nil { found = owners[region] }
            }
        }
        return found
    }

    /// Whether another country's outline, or the sea, lies within `borderUncertainty` of the point: probed
    /// at that distance in eight directions.
    func isNearBorder(_ coordinate: Coordinate, of country: Int) -> Bool {
        let north = Self.borderUncertainty / 111_000
        let east = north / max(cos(coordinate.latitude * .pi / 180), 0.01)
        for k in 0..<8 {
            let angle = Double(k) * .pi / 4
            let probe = Coordinate(latitude: min(max(coordinate.latitude + north * cos(angle), -90), 90),
                                   longitude: remainder(coordinate.longitude + east * sin(angle), 360))
            if self.country(at: PreparedPoint(probe)) != country { return true }
        }
        return false
    }

    /// The nearest place, preferring one in the country whose outline holds the point; at sea or far from
    /// any outline, the nearest place anywhere, with no country named.
    ///
    /// Natural Earth's 1:10m borders are off by up to a kilometre or two where they follow a river (the
    /// Oder at Görlitz, the Narva), which would give a town on the bank the country across. So within
    /// `borderUncertainty` of its country's outline, the point takes the nearest place whichever side it is on.
    public func reverse(_ coordinate: Coordinate) throws(GeocodingError) -> Placemark {
        guard coordinate.isValid else { throw .invalidCoordinate(latitude: coordinate.latitude, longitude: coordinate.longitude) }
        guard count > 0 else { throw .noMatch("\(coordinate.latitude), \(coordinate.longitude)") }
        let point = PreparedPoint(coordinate)
        let q = point.earthCentred
        let nearest = tree.nearest(to: q) { _ in true }!.index
        var place = nearest
        let holder = country(at: point)
        if let holder, Int(countryIndex[nearest]) != holder, !isNearBorder(coordinate, of: holder) {
            // Through a buffer, so that the predicate neither copies nor retains the gazetteer per node.
            let inCountry = countryIndex.withUnsafeBufferPointer { countries in
                tree.nearest(to: q) { Int(countries[$0]) == holder }
            }
            if let inCountry { place = inCountry.index }
        }
        return placemark(place, distance: Geodesic.distance(coordinate, self.coordinate(of: place)), countryKnown: holder != nil)
    }

    /// Places whose name or alternate name is `name`, with every qualifier matching the place's country (ISO
    /// code or name), first- or second-level administrative area; most populous first.
    public func forward(_ query: String, region hint: String? = nil, limit: Int = 10) throws(GeocodingError) -> [Placemark] {
        let parts = query.split(separator: ",").map { NameKey.normalized(String($0)) }.filter { !$0.isEmpty }
        guard let first = parts.first else { throw .emptyQuery }
        let qualifiers = Array(parts.dropFirst()) + (hint.map { [NameKey.normalized($0)] } ?? []).filter { !$0.isEmpty }
        let hash = NameKey.hash(ofKey: first)
        var places: [Int] = []
        let low = hash << UInt64(GazetteerFormat.idBits)
        var i = lowerBound(low)
        let idMask: UInt64 = (1 << UInt64(GazetteerFormat.idBits)) - 1
        while i < keys.count, keys[i] >> UInt64(GazetteerFormat.idBits) == hash {
            let place = Int(keys[i] & idMask)
            if qualifiers.allSatisfy({ matches(place, $0) }) { places.append(place) }
            i += 1
        }
        guard !places.isEmpty else { throw .noMatch(query) }
        places.sort { population[$0] != population[$1] ? population[$0] > population[$1] : $0 < $1 }
        return places.prefix(max(limit, 1)).map { placemark($0, distance: nil) }
    }

    private func lowerBound(_ key: UInt64) -> Int {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Whether a normalized qualifier names the place's country (ISO code or name) or one of its areas.
    private func matches(_ place: Int, _ qualifier: String) -> Bool {
        let country = countryKeys[Int(countryIndex[place])]
        if country.code == qualifier || country.name == qualifier { return true }
        for offset in [admin1Offset[place], admin2Offset[place]] {
            if let area = Self.string(strings, offset), NameKey.normalized(area) == qualifier { return true }
        }
        return false
    }
}

extension Gazetteer {
    /// The distance to the nearest place by testing every one (in a country, when given): the baseline
    /// the tree is checked against.
    func nearestByScan(_ coordinate: Coordinate, inCountry code: String?) -> Double {
        let q = PreparedPoint(coordinate).earthCentred
        var best = -1, bestChord = Double.infinity
        for place in 0..<count where code == nil || countryCodes[Int(countryIndex[place])] == code {
            let dx = q.x - tree.x[place], dy = q.y - tree.y[place], dz = q.z - tree.z[place]
            let d = dx * dx + dy * dy + dz * dz
            if d < bestChord { best = place; bestChord = d }
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
