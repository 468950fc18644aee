import Foundation
import GeofenceCore
import SQLite
#if canImport(Glibc)
import Glibc
#endif

/// `geofence-agent status`: what the agent on this vehicle is doing, read beside the running agent from
/// its status file and, read-only, its store.
public enum StatusJob {
    public static func run(configurationPath: String, json: Bool, emit: (String) -> Void) throws(AgentError) {
        let configuration = try AgentConfiguration.load(configurationPath)
        let statusPath = configuration.storePath + ".status.json"
        var status: AgentStatus?
        if let data = FileManager.default.contents(atPath: statusPath) {
            status = try? JSONDecoder().decode(AgentStatus.self, from: data)
        }
        let running = status.map { s in s.status == "online" && kill(s.pid, 0) == 0 } ?? false
        let age = (try? FileManager.default.attributesOfItem(atPath: statusPath)[.modificationDate] as? Date).map { Date().timeIntervalSince($0) }
        let conditions = try storedConditions(configuration.storePath)
        if json {
            var line = JSONLine()
            line.add("running", running)
            line.add("statusAgeSeconds", orNull: age)
            if let status, let data = try? JSONEncoder().encode(status) { line.addRaw("agent", String(decoding: data, as: UTF8.self)) }
            line.addRaw("conditions", "[" + conditions.map(\.json).joined(separator: ",") + "]")
            emit(line.text)
            return
        }
        emit("agent        \(running ? "running (pid \(status!.pid), since \(status!.startedAt))" : "not running\(status.map { " (last seen \($0.updated))" } ?? "")")")
        if let s = status {
            emit("vehicle      \(s.fleet)/\(s.vehicle)  version \(s.version)")
            emit("broker       \(s.broker)")
            let fix = s.gps.fixAgeSeconds.map { String(format: "last fix %.1f s ago", $0) } ?? "no fix yet"
            let accuracy = s.gps.horizontalAccuracy.map { String(format: ", ±%.1f m", $0) } ?? ""
            emit("gps          \(s.gps.state)\(s.gps.detail.map { ": \($0)" } ?? "")  (\(fix)\(accuracy))")
            let o = s.outbox
            emit("outbox       \(o.rows) waiting (\(o.transitions) transitions, \(o.locations) locations, \(o.bytes) bytes); caps \(s.outboxCaps.maximumRows) rows / \(s.outboxCaps.maximumBytes) bytes, hard \(s.outboxCaps.hardMaximumRows) / \(s.outboxCaps.hardMaximumBytes)")
            if o.capReached || o.droppedLocations > 0 || o.droppedTransitions > 0 {
                emit("             CAP REACHED: dropped \(o.droppedLocations) locations, \(o.droppedTransitions) transitions")
            }
            if let problem = s.storeProblem { emit("store        PROBLEM: \(problem) (\(s.waitingStateChanges) state changes waiting)") }
            emit("live updates \(s.liveUpdates ? "on" : "off")")
        }
        emit("")
        emit(pad("MONITOR", 12) + pad("CONDITION", 28) + pad("STATE", 13) + pad("SINCE", 26) + "SOURCE")
        for c in conditions {
            emit(pad(c.monitor, 12) + pad(c.identifier, 28) + pad(c.state, 13) + pad(c.since ?? "-", 26) + c.source)
        }
    }

    struct Row {
        var monitor: String, identifier: String, state: String, since: String?, version: Int64?, source: String

        /// One condition as `status --json` and `conditions list --json` print it.
        var json: String {
            var line = JSONLine()
            line.add("monitor", monitor)
            line.add("identifier", identifier)
            line.add("state", state)
            line.add("since", orNull: since)
            line.add("version", orNull: version.map(Int.init))
            line.add("source", source)
            return line.text
        }
    }

    static func storedConditions(_ path: String) throws(AgentError) -> [Row] {
        guard FileManager.default.fileExists(atPath: path) else { return [] }
        do {
            let db = try Database(path: path, create: false, readOnly: true)
            let s = try db.statement("""
                SELECT monitor, identifier, state, since, version, source FROM conditions ORDER BY monitor, identifier
                """)
            var rows: [Row] = []
            while try s.step() {
                rows.append(Row(monitor: s.text(0) ?? "", identifier: s.text(1) ?? "", state: s.text(2) ?? "",
                                since: s.isNull(3) ? nil : iso8601(Date(timeIntervalSince1970: s.double(3))),
                                version: s.isNull(4) ? nil : s.int(4), source: s.text(5) ?? ""))
            }
            return rows
        } catch {
            throw AgentError("cannot read the store \(path): \(error)")
        }
    }

    static func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count) }
}
