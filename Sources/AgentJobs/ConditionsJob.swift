import AgentFormats
import Foundation
import GeofenceAgent
import GeofenceCore
import GeofenceStore
import Logging
import ThreadExecution

#if canImport(Glibc)
    import Glibc
#endif

/// `geofence-agent conditions list|show|add|remove`: the vehicle's local conditions. Reads go to the store
/// (read-only, beside a running agent). Changes go straight to the store when the agent is stopped; when
/// it runs (it holds the store), they are left in its inbox and applied within a second.
package enum ConditionsJob {
    static func configuration(_ path: String) throws(AgentError) -> AgentConfiguration {
        try AgentConfiguration.load(path)
    }

    package static func list(configurationPath: String, json: Bool, emit: (String) -> Void) throws(AgentError) {
        let c = try configuration(configurationPath)
        let rows = try StatusJob.storedConditions(c.storePaths) ?? []
        if json {
            for row in rows { emit(row.json) }
            return
        }
        emit(
            StatusJob.pad("MONITOR", 12) + StatusJob.pad("CONDITION", 28) + StatusJob.pad("STATE", 13)
                + StatusJob.pad("VERSION", 9) + "SOURCE")
        for r in rows {
            emit(
                StatusJob.pad(r.monitor, 12) + StatusJob.pad(r.identifier, 28) + StatusJob.pad(r.state.rawValue, 13)
                    + StatusJob.pad(r.version.map(String.init) ?? "-", 9) + r.source)
        }
    }

    package static func show(configurationPath: String, identifier: String, monitor: String?, emit: (String) -> Void)
        throws(AgentError)
    {
        let c = try configuration(configurationPath)
        let definitions: [(monitor: String, definition: String)]
        do {
            guard let reader = try StoreReader.open(c.storePath) else {
                throw AgentError("no store at \(c.storePath) yet", exitCode: 1)
            }
            definitions = try reader.definitions(of: identifier, monitor: monitor)
        } catch let error as AgentError {
            throw error
        } catch {
            throw AgentError("cannot read the store: \(error)")
        }
        if definitions.isEmpty {
            throw AgentError("no condition '\(identifier)'\(monitor.map { " in monitor '\($0)'" } ?? "")", exitCode: 1)
        }
        for d in definitions { emit(d.definition) }
    }

    package static func add(
        configurationPath: String, file path: String, logger: Logger, emit: @Sendable (String) -> Void
    ) async throws(AgentError) {
        let c = try configuration(configurationPath)
        let file = try ConditionFile.load(path)
        if !file.errors.isEmpty {
            throw AgentError(
                "nothing was added: \(file.errors.count) of \(file.errors.count + file.definitions.count) features are invalid:\n"
                    + file.errorLines.joined(separator: "\n"))
        }
        let paths = c.storePaths
        if agentRunning(paths) {
            let data: Data
            do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
                throw AgentError("\(path): \(error)")
            }
            try await handToAgent(paths, kind: "add", suffix: "geojson", data: data)
            emit("added \(file.definitions.count) conditions through the running agent")
            return
        }
        let store: AgentStore
        do { store = try await AgentStore.open(path: c.storePath, logger: logger) } catch {
            throw AgentError("\(error)")
        }
        do {
            let results = try await store.putConditions(
                file.definitions.map {
                    .init(
                        monitor: $0.monitor ?? MonitorSet.defaultMonitor, identifier: $0.identifier,
                        condition: $0.condition,
                        definition: file.featureText($0.identifier) ?? "{}", source: "local:cli")
                })
            await store.close()
            for (d, r) in zip(file.definitions, results) {
                if case .olderVersion(let v) = r {
                    emit("kept \(d.identifier): the stored version \(v) is newer")
                } else {
                    emit("added \(d.identifier)")
                }
            }
        } catch {
            await store.close()
            throw AgentError("\(error)")
        }
    }

    package static func remove(
        configurationPath: String, identifier: String, monitor: String?, logger: Logger,
        emit: @Sendable (String) -> Void
    ) async throws(AgentError) {
        let c = try configuration(configurationPath)
        let monitor = monitor ?? MonitorSet.defaultMonitor
        let paths = c.storePaths
        if agentRunning(paths) {
            let data = (try? JSONEncoder().encode(InboxRemoval(monitor: monitor, identifier: identifier))) ?? Data()
            try await handToAgent(paths, kind: "remove", suffix: "json", data: data)
            emit("removed \(identifier) through the running agent")
            return
        }
        let store: AgentStore
        do { store = try await AgentStore.open(path: c.storePath, logger: logger) } catch {
            throw AgentError("\(error)")
        }
        let removed: Bool
        do { removed = try await store.removeCondition(monitor: monitor, identifier: identifier) } catch {
            await store.close()
            throw AgentError("\(error)")
        }
        await store.close()
        guard removed else { throw AgentError("no condition '\(identifier)' in monitor '\(monitor)'", exitCode: 1) }
        emit("removed \(identifier)")
    }

    /// The agent holds an exclusive lock beside its store while it runs.
    static func agentRunning(_ paths: StorePaths) -> Bool { paths.isLockedByAnAgent }

    /// Leaves a change in the running agent's inbox (written whole, then renamed) and waits until it is applied.
    static func handToAgent(_ paths: StorePaths, kind: String, suffix: String, data: Data) async throws(AgentError) {
        let inbox = try inboxPath(paths)
        let request = (inbox as NSString).appendingPathComponent(
            "\(kind)-\(Date().timeIntervalSince1970)-\(UUID().uuidString.prefix(8)).\(suffix)")
        do {
            try data.write(to: URL(fileURLWithPath: request + ".tmp"))
            try FileManager.default.moveItem(atPath: request + ".tmp", toPath: request)
        } catch { throw AgentError("cannot leave the change for the running agent in \(inbox): \(error)") }
        try await waitApplied(request)
    }

    static func inboxPath(_ paths: StorePaths) throws(AgentError) -> String {
        let path = paths.inbox
        do { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) } catch {
            throw AgentError("cannot create \(path): \(error)")
        }
        return path
    }

    static func waitApplied(_ request: String) async throws(AgentError) {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: request + ".rejected") {
                throw AgentError("the running agent refused the change; see its log", exitCode: 1)
            }
            if !FileManager.default.fileExists(atPath: request) { return }
            try? await Task.sleep(for: .milliseconds(50), clock: .serialTimer)
        }
        throw AgentError(
            "the running agent did not apply the change within 10 s; it stays in \(request) and is applied when the agent gets to it",
            exitCode: 1)
    }
}
