import AgentFormats
import GeofenceAgent

/// A GPX drive for `simulate` or a replay: refused with the file's name (and line), or read into points
/// that all lie on the globe with finite, plausible values.
enum GPXCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        let points: [GPXPoint]
        do {
            points = try GPXTrack.parse(input, name: "drive.gpx")
        } catch {
            return refusalProblems(error.description, startsWith: "drive.gpx")
        }
        var problems: [String] = []
        if points.isEmpty { problems.append("accepted with no points") }
        for p in points {
            if !(abs(p.latitude) <= 90 && abs(p.longitude) <= 180) { problems.append("a point off the globe: \(p)") }
            if let e = p.elevation, !e.isFinite { problems.append("elevation \(e)") }
            if let s = p.speed, !(s.isFinite && s >= 0) { problems.append("speed \(s)") }
            if let c = p.course, !(c.isFinite && (0...360).contains(c)) { problems.append("course \(c)") }
            if p.line < 1 { problems.append("line \(p.line)") }
        }
        for s in points.speeds where !(s.isFinite && (s >= 0 || s == -1)) { problems.append("a derived speed \(s)") }
        return Array(problems.prefix(5))
    }
}
