import AgentJobs
import Foundation

/// The synthetic drive and its conditions written to a directory of their own, for a test that runs the
/// agent in process on them, with what `simulate` makes of them (the events the agent must publish).
package struct SyntheticDriveFiles {
    package let directory: URL
    package var gpx: String { directory.appendingPathComponent("drive.gpx").path }
    package var conditions: String { directory.appendingPathComponent("conditions.geojson").path }

    /// Writes the drive, and `conditions` (the drive's own circles unless given).
    package init(conditions text: String = SyntheticDrive.conditions) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("drive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try SyntheticDrive.gpx.write(toFile: gpx, atomically: true, encoding: .utf8)
        try text.write(toFile: conditions, atomically: true, encoding: .utf8)
    }

    package func remove() { try? FileManager.default.removeItem(at: directory) }

    /// `simulate`'s events on the drive and the conditions, each condition's first state left out (the agent
    /// keeps that to its status), in process.
    package func simulatedEvents() throws -> [[String: Any]] {
        var events: [[String: Any]] = []
        try SimulateJob.run(
            conditionsPath: conditions, trackPath: gpx, accuracy: 5,
            emit: { line in
                guard let e = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                    e["event"] as? String != "initial"
                else { return }
                events.append(e)
            }, warn: { _ in })
        return events
    }
}
