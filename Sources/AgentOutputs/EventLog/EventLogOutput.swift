import AgentFormats
import GeofenceCore
import Logging
import ServiceLifecycle

/// A local log of events (docs/integrations.md#event-log): one JSON line per published event, removal
/// exits included, appended to `eventLog.path` so that `tail -f` on the vehicle shows what the agent
/// decided, broker or not. It sends nothing over MQTT. The fix path only queues the line; the writer
/// service appends it on a thread of its own. The file is a log, not a record: it is not fsynced (the
/// outbox is the durable record).
struct EventLogOutput: AgentOutput {
    let writer: EventLogWriter

    static var settingsType: (any OutputSettings.Type)? { EventLogSettings.self }

    static func make(_ context: OutputContext) -> EventLogOutput? {
        let settings = context.settings[EventLogSettings.self]
        guard let path = settings.path else { return nil }
        return EventLogOutput(
            writer: EventLogWriter(path: path, maximumBytes: settings.maximumBytes, logger: context.logger))
    }

    func messages(for happening: Happening) -> [OutputMessage] {
        if case .event(let e) = happening { writer.append(Self.line(e)) }
        return []
    }

    func services() throws -> [any Service] { [writer] }

    static func line(_ e: EventHappening) -> String {
        var line = JSONLine()
        line.add("time", iso8601(e.event.date))
        line.add("monitor", e.monitor)
        line.add("identifier", e.event.identifier)
        line.add("name", orNull: e.event.conditionName)
        line.add("event", e.event.kind.rawValue)
        line.add("state", e.event.state.rawValue)
        if let reason = e.event.reason { line.add("reason", reason.rawValue) }
        line.add("lat", e.event.location.coordinate.latitude)
        line.add("lon", e.event.location.coordinate.longitude)
        return line.text
    }
}
