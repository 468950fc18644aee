import Foundation
import GeofenceCore

/// One point of a GPX 1.0 or 1.1 track.
package struct GPXPoint: Sendable, Equatable {
    package var latitude: Double
    package var longitude: Double
    package var elevation: Double?
    package var time: Date?
    /// GPX 1.0's `<speed>` (m/s) and `<course>` (degrees), when present.
    package var speed: Double?
    package var course: Double?
    /// The line of the point in the file, for error messages.
    package var line: Int
}

/// Reads the track points of a GPX file (`trk/trkseg/trkpt`); a file with no track falls back to its
/// route points, then to its waypoints, as Xcode replays waypoints.
package enum GPXTrack {
    package static func load(_ path: String) throws(AgentError) -> [GPXPoint] {
        try parse(FileInput.bytes(path, what: "GPX"), name: path)
    }

    package static func parse(_ bytes: [UInt8], name: String) throws(AgentError) -> [GPXPoint] {
        // GPX is UTF-8; other bytes are refused where they stand rather than read as replacement characters.
        if let line = firstLineNotUTF8(bytes) {
            throw AgentError("\(name):\(line): not a readable GPX file: the text is not UTF-8")
        }
        var scanner = XMLEvents.Scanner(bytes: bytes)
        var reader = Reader(name: name)
        while true {
            let next: XMLEvents.Event?
            do { next = try scanner.next() } catch {
                throw AgentError("\(name):\(error.line): not a readable GPX file: \(error.reason)")
            }
            guard let event = next else { break }
            switch event {
            case .start(let element, let attributes, let line): try reader.start(element, attributes, line: line)
            case .text(let text): reader.text += text
            case .end(let element, let line): try reader.end(element, line: line)
            }
        }
        guard reader.sawGPX else { throw AgentError("\(name): not a GPX file (no <gpx> element)") }
        for kind in ["trkpt", "rtept", "wpt"] {
            if let points = reader.points[kind], !points.isEmpty { return points }
        }
        throw AgentError("\(name): the GPX file has no track, route or waypoints")
    }

    /// The text without the white space around it (Unicode's, as `CharacterSet.whitespacesAndNewlines`
    /// has it: the same scalars, without Foundation's bridging through UTF-16 for every value).
    static func trimmed(_ text: String) -> Substring {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = scalars.lastIndex(where: { !isSpace($0) }) ?? first
        return text[first..<scalars.index(after: last)]  // by scalars: a grapheme's bounds may hold a space
    }

    /// Unicode's white space, with ASCII answered without a look in the property tables, and the zero-width
    /// space that Foundation's set still holds from when Unicode counted it as a space.
    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x200B: true
        case ..<0x80: false
        default: scalar.properties.isWhitespace
        }
    }

    /// The 1-based line of the first byte that is not part of valid UTF-8, if any.
    static func firstLineNotUTF8(_ bytes: [UInt8]) -> Int? {
        guard String(validating: bytes, as: UTF8.self) == nil else { return nil }  // the common case, fast
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        var line = 1
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): if scalar == "\n" { line += 1 }
            case .emptyInput: return nil
            case .error: return line
            }
        }
    }

    /// Collects the points of each kind from the document's events.
    private struct Reader {
        let name: String
        var points: [String: [GPXPoint]] = [:]
        var current: (kind: String, point: GPXPoint)?
        var text = ""
        var sawGPX = false

        init(name: String) { self.name = name }

        /// The element's name without its namespace prefix.
        static func local(_ element: String) -> Substring {
            guard let colon = element.utf8.lastIndex(of: UInt8(ascii: ":")) else { return element[...] }
            return element[element.utf8.index(after: colon)...]
        }

        /// Whether the element is a point of a track, a route or the waypoints.
        static func isPoint(_ local: Substring) -> Bool { local == "trkpt" || local == "rtept" || local == "wpt" }

        mutating func start(_ element: String, _ attributes: [String: String], line: Int) throws(AgentError) {
            text = ""
            let local = Self.local(element)
            if local == "gpx" { sawGPX = true }
            guard Self.isPoint(local) else { return }
            guard let latText = attributes["lat"], let lat = Double(latText), abs(lat) <= 90,
                let lonText = attributes["lon"], let lon = Double(lonText), abs(lon) <= 180
            else {
                throw AgentError(
                    "\(name):\(line): <\(local)> needs lat in [-90, 90] and lon in [-180, 180], found lat=\(attributes["lat"]?.clipped ?? "none") lon=\(attributes["lon"]?.clipped ?? "none")"
                )
            }
            current = (String(local), GPXPoint(latitude: lat, longitude: lon, line: line))
        }

        mutating func end(_ element: String, line: Int) throws(AgentError) {
            guard var entry = current else { return }
            let local = Self.local(element)
            let value = GPXTrack.trimmed(text)
            switch local {
            case "ele", "speed", "course":
                // Refused, not dropped: a replay would otherwise run on a value nobody wrote.
                let (range, what): (ClosedRange<Double>, String) =
                    switch local {
                    case "ele": (-20_000...1_000_000, "an elevation in metres")
                    case "speed": (0...100_000, "a speed in m/s, 0 or more")
                    default: (0...360, "a course in degrees from 0 to 360")
                    }
                guard let number = Double(value), range.contains(number) else {
                    throw AgentError("\(name):\(line): <\(local)> '\(String(value).clipped)' is not \(what)")
                }
                switch local {
                case "ele": entry.point.elevation = number
                case "speed": entry.point.speed = number
                default: entry.point.course = number
                }
            case "time":
                guard let date = Self.time(String(value)) else {
                    throw AgentError("\(name):\(line): <time> '\(String(value).clipped)' is not an ISO 8601 time")
                }
                entry.point.time = date
            case _ where local == entry.kind:
                points[entry.kind, default: []].append(entry.point)
                current = nil
                return
            default: break
            }
            current = entry
        }

        /// An RFC 3339 time, as GPX writes it. Not Foundation's ISO8601DateFormatter: ICU traps (divides
        /// by zero) on a fraction of some 60 digits, found by fuzzing.
        static func time(_ s: String) -> Date? { RFC3339.date(from: s) }
    }
}

extension Array where Element == GPXPoint {
    /// Each point's speed in m/s: its own `<speed>`, or else the distance to the next point over the time
    /// between them (the last point: from the one before), as a receiver's Doppler speed would say; -1 where
    /// times are missing. A replay without speeds would look to the rest detection like a vehicle that
    /// may be standing still.
    package var speeds: [Double] {
        indices.map { i in
            if let s = self[i].speed { return s }
            let (a, b) = i + 1 < count ? (i, i + 1) : (i - 1, i)
            guard a >= 0, let ta = self[a].time, let tb = self[b].time, tb > ta else { return -1 }
            let from = Coordinate(latitude: self[a].latitude, longitude: self[a].longitude)
            let to = Coordinate(latitude: self[b].latitude, longitude: self[b].longitude)
            return Geodesic.distance(from, to) / tb.timeIntervalSince(ta)
        }
    }
}
