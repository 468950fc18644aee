/// Points from a CSV file with a header naming at least `lat` and `lon` (in any order).
package enum PointsCSV {
    /// The points, or an error naming the file and line.
    package static func parse(_ bytes: [UInt8], path: String) throws(AgentError) -> [(
        latitude: Double, longitude: Double
    )] {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated()
            .makeIterator()
        guard let (_, header) = lines.next() else {
            throw AgentError("\(path): empty file; expected a header with lat,lon")
        }
        guard let (latColumn, lonColumn) = columns(header) else {
            throw AgentError(
                "\(path):1: the header must name 'lat' and 'lon' columns, found '\(String(header).clipped)'")
        }
        var points: [(Double, Double)] = []
        while let (n, line) = lines.next() {
            if line.allSatisfy(\.isWhitespace) { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > max(latColumn, lonColumn) else {
                throw AgentError(
                    "\(path):\(n + 1): expected at least \(max(latColumn, lonColumn) + 1) fields, found \(fields.count)"
                )
            }
            let latText = fields[latColumn].trimmingCharacters(in: " \"")
            let lonText = fields[lonColumn].trimmingCharacters(in: " \"")
            guard let lat = Double(latText), lat.isFinite, abs(lat) <= 90 else {
                throw AgentError("\(path):\(n + 1): lat '\(latText.clipped)' is not a latitude in [-90, 90]")
            }
            guard let lon = Double(lonText), lon.isFinite, abs(lon) <= 180 else {
                throw AgentError("\(path):\(n + 1): lon '\(lonText.clipped)' is not a longitude in [-180, 180]")
            }
            points.append((lat, lon))
        }
        return points
    }

    /// The `lat` and `lon` columns a header line names, or nil when it names not both.
    package static func columns(_ header: Substring) -> (lat: Int, lon: Int)? {
        let names = header.split(separator: ",", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: " \"").lowercased()
        }
        guard let lat = names.firstIndex(of: "lat"), let lon = names.firstIndex(of: "lon") else { return nil }
        return (lat, lon)
    }
}

extension Substring {
    package func trimmingCharacters(in set: String) -> String {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
