import AgentFormats
import GeofenceAgent
import GeofenceCore

/// `geofence-agent evaluate`: pure containment of each point in a set of conditions, one JSON line per
/// point, `{"point": N, "inside": ["id", ...]}` with ids sorted and N counting from 0.
package enum EvaluateJob {
    /// Writes each output line through `emit` and refused features through `warn`. Throws when the input
    /// cannot be used, or (exit status 1, after the output) when some features were refused.
    package static func run(
        conditionsPath: String, pointsPath: String, limits: GeoJSONLimits = .default,
        emit: (String) -> Void, warn: (String) -> Void
    ) throws(AgentError) {
        let file = try ConditionFile.load(conditionsPath, limits: limits)
        file.errorLines.forEach(warn)
        let points = try PointsCSV.parse(FileInput.bytes(pointsPath, what: "points"), path: pointsPath)
        let set = ConditionSet(file.definitions.map(\.condition.region))
        let ids = file.definitions.map(\.identifier)
        for (n, p) in points.enumerated() {
            let point = PreparedPoint(Coordinate(latitude: p.latitude, longitude: p.longitude))
            var line = JSONLine()
            line.add("point", n)
            line.add("inside", strings: set.containing(point).map { ids[$0] }.sorted())
            emit(line.text)
        }
        if !file.errors.isEmpty {
            throw AgentError(
                "\(file.errors.count) of \(file.errors.count + file.definitions.count) features were refused; the others were evaluated",
                exitCode: 1)
        }
    }
}
