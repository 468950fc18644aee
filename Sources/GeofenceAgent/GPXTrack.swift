import Foundation
import GeofenceCore
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One point of a GPX 1.0 or 1.1 track.
public struct GPXPoint: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    public var time: Date?
    /// GPX 1.0's `<speed>` (m/s) and `<course>` (degrees), when present.
    public var speed: Double?
    public var course: Double?
    /// The line of the point in the file, for error messages.
    public var line: Int
}

/// Reads the track points of a GPX file (`trk/trkseg/trkpt`); a file with no track falls back to its
/// route points, then to its waypoints, as Xcode replays waypoints.
public enum GPXTrack {
    public static func load(_ path: String) throws(AgentError) -> [GPXPoint] {
        try parse(FileInput.bytes(path, what: "GPX"), name: path)
    }

    public static func parse(_ bytes: [UInt8], name: String) throws(AgentError) -> [GPXPoint] {
        let reader = Reader(name: name)
        let parser = XMLParser(data: Data(bytes))
        parser.delegate = reader
        let ok = parser.parse()
        if let problem = reader.problem { throw AgentError(problem) }
        // libxml2 recovers from some errors and still reports success, so a reported error decides.
        if let (code, line) = reader.xmlError ?? (ok ? nil : ((parser.parserError as NSError?)?.code ?? 0, parser.lineNumber)) {
            throw AgentError("\(name):\(line): not a readable GPX file: \(xmlReason(code))")
        }
        guard reader.sawGPX else { throw AgentError("\(name): not a GPX file (no <gpx> element)") }
        for kind in ["trkpt", "rtept", "wpt"] {
            if let points = reader.points[kind], !points.isEmpty { return points }
        }
        throw AgentError("\(name): the GPX file has no track, route or waypoints")
    }

    /// Words for the libxml2 errors a hand-edited or truncated file produces.
    static func xmlReason(_ code: Int) -> String {
        switch code {
        case 4: "the file is empty or not XML"
        case 5: "the file ends before its elements are closed (truncated?)"
        case 76: "a closing tag does not match its opening tag"
        case 73, 74: "a tag is not closed"
        default: "XML error \(code)"
        }
    }

    private final class Reader: NSObject, XMLParserDelegate {
        let name: String
        var points: [String: [GPXPoint]] = [:]
        var current: (kind: String, point: GPXPoint)?
        var text = ""
        var problem: String?
        var sawGPX = false
        var xmlError: (code: Int, line: Int)?

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: Error) {
            if xmlError == nil { xmlError = ((parseError as NSError).code, parser.lineNumber) }
        }

        init(name: String) { self.name = name }

        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            text = ""
            let local = element.split(separator: ":").last.map(String.init) ?? element
            if local == "gpx" { sawGPX = true }
            guard ["trkpt", "rtept", "wpt"].contains(local) else { return }
            let line = parser.lineNumber
            guard let latText = attributes["lat"], let lat = Double(latText), abs(lat) <= 90,
                  let lonText = attributes["lon"], let lon = Double(lonText), abs(lon) <= 180 else {
                fail(parser, "\(name):\(line): <\(local)> needs lat in [-90, 90] and lon in [-180, 180], found lat=\(attributes["lat"] ?? "none") lon=\(attributes["lon"] ?? "none")")
                return
            }
            current = (local, GPXPoint(latitude: lat, longitude: lon, line: line))
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            let local = element.split(separator: ":").last.map(String.init) ?? element
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard var entry = current else { return }
            switch local {
            case "ele": entry.point.elevation = Double(value)
            case "speed": entry.point.speed = Double(value)
            case "course": entry.point.course = Double(value)
            case "time":
                guard let date = parseTime(value) else {
                    fail(parser, "\(name):\(parser.lineNumber): <time> '\(value)' is not an ISO 8601 time")
                    return
                }
                entry.point.time = date
            case entry.kind:
                points[entry.kind, default: []].append(entry.point)
                current = nil
                return
            default: break
            }
            current = entry
        }

        private func fail(_ parser: XMLParser, _ message: String) {
            problem = problem ?? message
            parser.abortParsing()
        }

        private func parseTime(_ s: String) -> Date? {
            let withFraction = ISO8601DateFormatter()
            withFraction.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            if let d = withFraction.date(from: s) { return d }
            let plain = ISO8601DateFormatter()
            plain.formatOptions = [.withInternetDateTime]
            return plain.date(from: s)
        }
    }
}

extension Array where Element == GPXPoint {
    /// Each point's speed in m/s: its own `<speed>`, or else the distance to the next point over the time
    /// between them (the last point: from the one before), as a receiver's Doppler speed would say; -1 where
    /// times are missing. A replay without speeds would look to the rest detection like a vehicle that
    /// may be standing still.
    public var speeds: [Double] {
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
