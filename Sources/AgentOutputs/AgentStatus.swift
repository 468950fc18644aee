import Foundation
import GPSD
import GeofenceStore
import Places

/// What `geofence-agent status` and the retained status topic show.
package struct AgentStatus: Sendable, Codable, Equatable {
    package struct GPS: Sendable, Codable, Equatable {
        package var state: String
        package var detail: String?
        package var device: String?
        package var fixAgeSeconds: Double?
        package var horizontalAccuracy: Double?

        package init(
            state: String, detail: String? = nil, device: String? = nil, fixAgeSeconds: Double? = nil,
            horizontalAccuracy: Double? = nil
        ) {
            self.state = state
            self.detail = detail
            self.device = device
            self.fixAgeSeconds = fixAgeSeconds
            self.horizontalAccuracy = horizontalAccuracy
        }
    }

    package struct Monitor: Sendable, Codable, Equatable {
        package var name: String
        package var conditions: Int
        package var satisfied: Int

        package init(name: String, conditions: Int, satisfied: Int) {
            self.name = name
            self.conditions = conditions
            self.satisfied = satisfied
        }
    }

    package var status: String
    package var fleet: String
    package var vehicle: String
    package var version: String
    package var pid: Int32
    package var updated: String
    package var startedAt: String
    package var broker: String
    /// Whether the broker can give the vehicle its geofences: `ok`, `unchecked`, `unavailable: WHY`.
    package var geofenceSync: String?
    /// Whether the geofences held match their sets' manifests: `unconfirmed: no manifest`, `checking`,
    /// `confirmed: N geofences` or `differs: WHAT` (docs/topics.md, "manifests").
    package var geofenceSet: String?
    package var gps: GPS
    package var monitors: [Monitor]
    package var conditions: Int
    package var outbox: OutboxStats
    package var outboxCaps: OutboxLimits
    package var store: String
    package var storeProblem: String?
    /// State changes made but not yet written (the store refused writes, e.g. a full disk).
    package var waitingStateChanges: Int
    package var liveUpdates: Bool
    /// The place of the last fix (places on, a fix seen); absent otherwise.
    package var place: PlaceSummary?
    /// The longest time between two published statuses while connected: a dashboard calls a vehicle
    /// silent after about twice this.
    package var heartbeatSeconds: Double?

    package init(
        status: String, fleet: String, vehicle: String, version: String, pid: Int32, updated: String, startedAt: String,
        broker: String, geofenceSync: String? = nil, geofenceSet: String? = nil, gps: GPS, monitors: [Monitor],
        conditions: Int,
        outbox: OutboxStats, outboxCaps: OutboxLimits,
        store: String, storeProblem: String? = nil, waitingStateChanges: Int, liveUpdates: Bool,
        place: PlaceSummary? = nil, heartbeatSeconds: Double? = nil
    ) {
        self.status = status
        self.fleet = fleet
        self.vehicle = vehicle
        self.version = version
        self.pid = pid
        self.updated = updated
        self.startedAt = startedAt
        self.broker = broker
        self.geofenceSync = geofenceSync
        self.geofenceSet = geofenceSet
        self.gps = gps
        self.monitors = monitors
        self.conditions = conditions
        self.outbox = outbox
        self.outboxCaps = outboxCaps
        self.store = store
        self.storeProblem = storeProblem
        self.waitingStateChanges = waitingStateChanges
        self.liveUpdates = liveUpdates
        self.place = place
        self.heartbeatSeconds = heartbeatSeconds
    }
}
