import AgentFormats
import AgentOutputs
import Foundation
import GeofenceAgent
import GeofenceCore
import GeofenceStore

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-agent status`: what the agent on this vehicle is doing, read beside the running agent from
/// its status file and, read-only, its store.
package enum StatusJob {
    /// The exit status when no agent runs with this configuration (as `systemctl status` and LSB use).
    package static let notRunning: Int32 = 3

    /// Prints the status; throws (exit 3) after printing it when no agent runs.
    package static func run(configurationPath: String, json: Bool, emit: (String) -> Void) throws(AgentError) {
        let configuration = try AgentConfiguration.load(configurationPath)
        let paths = configuration.storePaths
        var status: AgentStatus?
        if let data = FileManager.default.contents(atPath: paths.status) {
            status = try? JSONDecoder().decode(AgentStatus.self, from: data)
        }
        let running = status.map { s in s.status == "online" && processExists(s.pid) } ?? false
        let age = (try? FileManager.default.attributesOfItem(atPath: paths.status)[.modificationDate] as? Date).map {
            Date().timeIntervalSince($0)
        }
        // The agent replaces the file when it changes, else every 30 s: the fix has aged since.
        if running, let age, let fixAge = status?.gps.fixAgeSeconds { status?.gps.fixAgeSeconds = fixAge + age }
        let conditions = try storedConditions(paths)
        if json {
            var line = JSONLine()
            line.add("running", running)
            line.add("statusAgeSeconds", orNull: age)
            line.add("store", paths.database)
            line.add("storeExists", conditions != nil)
            if let status, let data = try? JSONEncoder().encode(status) {
                line.addRaw("agent", String(decoding: data, as: UTF8.self))
            }
            line.addRaw("conditions", "[" + (conditions ?? []).map(\.json).joined(separator: ",") + "]")
            emit(line.text)
        } else {
            table(status: status, running: running, paths: paths, conditions: conditions, emit: emit)
        }
        guard running else {
            let why =
                conditions == nil
                ? "no agent has run with \(configurationPath): there is no store at \(paths.database) yet; start the agent with it first"
                : "the agent is not running\(status.map { "; it was last seen at \($0.updated)" } ?? "")"
            throw AgentError(why, exitCode: notRunning)
        }
    }

    /// Whether `pid` runs: under systemd the agent is its own user (`DynamicUser`), and a signal to it from a
    /// technician's shell is refused (`EPERM`), not missed.
    private static func processExists(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }

    private static func table(
        status: AgentStatus?, running: Bool, paths: StorePaths, conditions: [StoreReader.Listing]?,
        emit: (String) -> Void
    ) {
        emit(
            "agent        \(running ? "running (pid \(status!.pid), since \(status!.startedAt))" : "not running\(status.map { " (last seen \($0.updated))" } ?? "")")"
        )
        if let s = status {
            emit("vehicle      \(s.fleet)/\(s.vehicle)  version \(s.version)")
            emit("broker       \(s.broker)")
            // Whether this broker can give the vehicle its geofences (docs/topics.md#geofences).
            if let sync = s.geofenceSync { emit("sync         geofences \(sync)") }
            if let set = s.geofenceSet { emit("set          geofences \(set)") }
            let fix = s.gps.fixAgeSeconds.map { String(format: "last fix %.1f s ago", $0) } ?? "no fix yet"
            let accuracy = s.gps.horizontalAccuracy.map { String(format: ", ±%.1f m", $0) } ?? ""
            emit("gps          \(s.gps.state)\(s.gps.detail.map { ": \($0)" } ?? "")  (\(fix)\(accuracy))")
            let o = s.outbox
            emit(
                "outbox       \(o.rows) waiting (\(o.transitions) transitions, \(o.locations) locations, \(o.bytes) bytes); caps \(s.outboxCaps.maximumRows) rows / \(s.outboxCaps.maximumBytes) bytes, hard \(s.outboxCaps.hardMaximumRows) / \(s.outboxCaps.hardMaximumBytes)"
            )
            if o.capReached || o.droppedLocations > 0 || o.droppedTransitions > 0 {
                emit(
                    "             CAP REACHED: dropped \(o.droppedLocations) locations, \(o.droppedTransitions) transitions"
                )
            }
            if let problem = s.storeProblem {
                emit("store        PROBLEM: \(problem) (\(s.waitingStateChanges) state changes waiting)")
            }
            emit("live updates \(s.liveUpdates ? "on" : "off")")
        }
        guard let conditions else {
            emit("store        none yet at \(paths.database)")
            return
        }
        emit("")
        emit(pad("MONITOR", 12) + pad("CONDITION", 28) + pad("STATE", 13) + pad("SINCE", 26) + "SOURCE")
        for c in conditions {
            emit(
                pad(c.monitor, 12) + pad(c.identifier, 28) + pad(c.state.rawValue, 13)
                    + pad(c.since.map(iso8601) ?? "-", 26) + c.source)
        }
    }

    /// Every stored condition, read through the store's read-only API; nil when there is no store yet.
    static func storedConditions(_ paths: StorePaths) throws(AgentError) -> [StoreReader.Listing]? {
        do {
            guard let reader = try StoreReader.open(paths.database) else { return nil }
            return try reader.conditions()
        } catch {
            throw AgentError("cannot read the store: \(error)")
        }
    }

    static func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
    }
}

extension StoreReader.Listing {
    /// One condition as `status --json` and `conditions list --json` print it.
    var json: String {
        var line = JSONLine()
        line.add("monitor", monitor)
        line.add("identifier", identifier)
        line.add("state", state.rawValue)
        line.add("since", orNull: since.map(iso8601))
        line.add("version", orNull: version.map(Int.init))
        line.add("source", source)
        return line.text
    }
}
