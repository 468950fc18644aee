import AgentFormats
import Foundation
import GeofenceAgent
import GeofenceCore
import LocalServers

#if canImport(Glibc)
    import Glibc
#endif

/// What the pure core's decision of a fix costs at a vehicle's pace, with no agent around it: a thread that
/// sleeps in `poll` between fixes, as the agent's does, wakes and gives the next fix of the budget's drive
/// to a `MonitorSet` holding the budget's circles (the monitors, the motion check, the trip detector).
/// Beside the reference wake it is the floor of a fix at 1 Hz on this machine: what any agent in Swift pays
/// to decide, before it stores, publishes or reports anything.
enum ReferenceDecision {
    /// CPU microseconds a second over `seconds` fixes a second apart, after `warmUp` fixes, and the monitors'
    /// steps (fixes with events) they made.
    static func cpuMicrosecondsPerSecond(driving: Bool, seconds: Int, warmUp: Int = 5) throws
        -> (microseconds: Double, steps: Int)
    {
        let (definitions, locations) = try drive(fixes: seconds + warmUp + 60, driving: driving)
        var monitors = monitors(definitions)
        // The steps are counted and returned so that no decision can be optimised away.
        var steps = 0
        var start = 0.0
        for (index, location) in locations.prefix(seconds + warmUp).enumerated() {
            if index == warmUp { start = ReferenceWake.threadCPUMicroseconds() }
            _ = poll(nil, 0, 1000)
            steps &+= monitors.process(location).steps.count
        }
        let spent = ReferenceWake.threadCPUMicroseconds() - start
        return (spent / Double(seconds), steps)
    }

    /// The budget's circles and `fixes` fixes of its drive (or its parked vehicle), as the agent reads them:
    /// written to a directory of the run's own, loaded, and the directory removed (at a signal too).
    static func drive(fixes: Int, driving: Bool) throws -> (definitions: [ConditionDefinition], locations: [Location]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("decision-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let removeDirectory = UndoOnSignal.removal(of: directory.path)
        defer { removeDirectory.now() }
        let gpx = directory.appendingPathComponent("drive.gpx")
        let zones = directory.appendingPathComponent("zones.geojson")
        try BudgetRoutes.gpx(fixes: fixes, driving: driving).write(to: gpx, atomically: true, encoding: .utf8)
        try BudgetRoutes.conditions.write(to: zones, atomically: true, encoding: .utf8)
        return (try ConditionFile.load(zones.path).definitions, try GPXReplay(path: gpx.path).locations)
    }

    /// A `MonitorSet` holding `definitions`, each in its monitor.
    static func monitors(_ definitions: [ConditionDefinition]) -> MonitorSet {
        var set = MonitorSet()
        for d in definitions {
            set.add(d.condition, identifier: d.identifier, monitor: d.monitor ?? MonitorSet.defaultMonitor)
        }
        return set
    }
}
