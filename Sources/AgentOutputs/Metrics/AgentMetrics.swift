import Foundation
import GPSD
import GeofenceCore
import Prometheus
import Synchronization

/// The agent's Prometheus metrics (docs/integrations.md#prometheus), in a registry of its own (no
/// global bootstrap). The parts that count hold this and call it; gauges that describe the present are set
/// from the status the agent writes every second; the resident size is read at each scrape.
package final class AgentMetrics: Sendable {
    package let registry = PrometheusCollectorRegistry()

    private let fixesReceived: Counter
    private let fixesRejected: [FixRejection: Counter]
    private let events: [EventKind: Counter]
    let commitLatency: DurationHistogram
    let acknowledgementLatency: DurationHistogram
    private let brokerConnected: Gauge
    private let brokerConnections: Counter
    private let outboxRows: Gauge
    private let outboxBytes: Gauge
    private let dropped: (locations: Counter, transitions: Counter)
    private let gpsState: [GPSStatus.State: Gauge]
    private let fixAge: Gauge
    private let residentBytes: Gauge
    private let running: Gauge
    private let trips: (ended: Counter, stops: Counter, metres: Counter)
    /// Per-monitor gauges, made when a monitor is first seen; and what the store had dropped when last read.
    private let perMonitor = Mutex<(conditions: [String: Gauge], satisfied: [String: Gauge], dropped: (Int64, Int64))>(
        ([:], [:], (0, 0)))

    /// Seconds: from 0.1 ms (a commit on a quiet disk) to 10 s (a broker far away).
    static let latencyBuckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2.5),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(10),
    ]

    package init() {
        let r = registry
        fixesReceived = r.counter(
            name: "geofence_agent_fixes_received_total", help: "Fixes offered to the monitors.")
        fixesRejected = Dictionary(
            uniqueKeysWithValues: FixRejection.allCases.map { reason in
                (
                    reason,
                    r.counter(
                        name: "geofence_agent_fixes_rejected_total", labels: [("reason", reason.rawValue)],
                        help: "Fixes that never reached the conditions, by reason.")
                )
            })
        events = Dictionary(
            uniqueKeysWithValues: EventKind.allCases.filter { $0 != .initial }.map { kind in
                (
                    kind,
                    r.counter(
                        name: "geofence_agent_events_total", labels: [("kind", kind.rawValue)],
                        help: "Events published, by kind.")
                )
            })
        trips = (
            r.counter(name: "geofence_agent_trips_total", help: "Trips ended (docs/trips.md)."),
            r.counter(name: "geofence_agent_stops_total", help: "Stops begun (docs/trips.md)."),
            r.counter(
                name: "geofence_agent_trip_distance_metres_total", help: "Metres driven on the trips ended.")
        )
        commitLatency = r.durationHistogram(
            name: "geofence_agent_store_commit_seconds", buckets: Self.latencyBuckets,
            help: "SQLite commit of a fix's state changes and events.")
        acknowledgementLatency = r.durationHistogram(
            name: "geofence_agent_outbox_ack_seconds", buckets: Self.latencyBuckets,
            help: "From handing an outbox entry to the MQTT client to the broker's acknowledgement.")
        brokerConnected = r.gauge(name: "geofence_agent_broker_connected", help: "1 while connected to the broker.")
        brokerConnections = r.counter(
            name: "geofence_agent_broker_connections_total",
            help: "Connections made to the broker; more than one means reconnects.")
        outboxRows = r.gauge(name: "geofence_agent_outbox_rows", help: "Entries waiting in the outbox.")
        outboxBytes = r.gauge(name: "geofence_agent_outbox_bytes", help: "Bytes waiting in the outbox.")
        dropped = (
            r.counter(
                name: "geofence_agent_outbox_dropped_total", labels: [("kind", "location")],
                help: "Outbox entries dropped at its caps."),
            r.counter(
                name: "geofence_agent_outbox_dropped_total", labels: [("kind", "transition")],
                help: "Outbox entries dropped at its caps.")
        )
        gpsState = Dictionary(
            uniqueKeysWithValues: GPSStatus.State.allCases.map { state in
                (
                    state,
                    r.gauge(
                        name: "geofence_agent_gps_state", labels: [("state", state.rawValue)],
                        help: "1 for the receiver's present state.")
                )
            })
        fixAge = r.gauge(
            name: "geofence_agent_gps_fix_age_seconds", help: "Seconds since the last fix (NaN before the first).")
        // Not `process_resident_memory_bytes`: node_exporter has its own, and a textfile of ours would collide.
        residentBytes = r.gauge(
            name: "geofence_agent_resident_memory_bytes", help: "The agent's resident memory size in bytes.")
        running = r.gauge(name: "geofence_agent_running", help: "1 while the agent runs; 0 once it has stopped.")
        fixAge.set(Double.nan)
        running.set(to: 1.0)
    }

    /// One fix offered to the monitors, and its outcome in the first monitor (every monitor filters alike).
    func trip(_ event: TripEvent) {
        switch event {
        case .tripEnded(let t):
            trips.ended.increment()
            trips.metres.increment(by: Int64(t.distance.rounded()))
        case .stopStarted: trips.stops.increment()
        case .tripStarted, .stopEnded: break
        }
    }

    func fix(rejected reason: FixRejection?) {
        fixesReceived.increment()
        if let reason { fixesRejected[reason]?.increment() }
    }

    func published(_ kind: EventKind) { events[kind]?.increment() }

    func brokerConnection(_ connected: Bool) {
        brokerConnected.set(to: connected ? 1.0 : 0.0)
        if connected { brokerConnections.increment() }
    }

    /// The agent has stopped: what its last textfile says, so that node_exporter does not report a stopped
    /// vehicle as connected.
    func stopped() {
        running.set(to: 0.0)
        brokerConnected.set(to: 0.0)
    }

    /// The present, from the status the agent writes every second.
    func observe(_ status: AgentStatus) {
        outboxRows.set(Double(status.outbox.rows))
        outboxBytes.set(Double(status.outbox.bytes))
        for (state, gauge) in gpsState { gauge.set(to: state.rawValue == status.gps.state ? 1.0 : 0.0) }
        fixAge.set(status.gps.fixAgeSeconds ?? .nan)
        let r = registry
        perMonitor.withLock { m in
            // The store counts drops since it was made; the counters take what is new.
            let (locations, transitions) = (status.outbox.droppedLocations, status.outbox.droppedTransitions)
            if locations > m.dropped.0 { dropped.locations.increment(by: locations - m.dropped.0) }
            if transitions > m.dropped.1 { dropped.transitions.increment(by: transitions - m.dropped.1) }
            m.dropped = (max(locations, m.dropped.0), max(transitions, m.dropped.1))
            for monitor in status.monitors {
                if m.conditions[monitor.name] == nil {
                    m.conditions[monitor.name] = r.gauge(
                        name: "geofence_agent_conditions", labels: [("monitor", monitor.name)],
                        help: "Conditions per monitor.")
                    m.satisfied[monitor.name] = r.gauge(
                        name: "geofence_agent_conditions_satisfied", labels: [("monitor", monitor.name)],
                        help: "Conditions the vehicle is inside, per monitor.")
                }
                m.conditions[monitor.name]?.set(Double(monitor.conditions))
                m.satisfied[monitor.name]?.set(Double(monitor.satisfied))
            }
        }
    }

    /// The text format, with the resident size as of now.
    package func text() -> String {
        residentBytes.set(Double(Self.residentBytes()))
        return registry.emitToString()
    }

    /// This process's resident set size, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
