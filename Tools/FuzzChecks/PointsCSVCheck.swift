import AgentFormats
import GeofenceAgent

/// The points CSV of `evaluate`: refused with the file's name and line, or read into points on the globe.
enum PointsCSVCheck {
    static func problems(_ input: [UInt8]) -> [String] {
        do {
            let points = try PointsCSV.parse(input, path: "points.csv")
            return points.filter { !(abs($0.latitude) <= 90 && abs($0.longitude) <= 180) }.prefix(5).map {
                "a point off the globe: \($0)"
            }
        } catch {
            return refusalProblems(error.description, startsWith: "points.csv:")
        }
    }
}
