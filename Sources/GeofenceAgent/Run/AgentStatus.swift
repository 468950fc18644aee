import Foundation
import GeofenceStore
import GPSD

/// What `geofence-agent status` and the retained status topic show.
package struct AgentStatus: Sendable, Codable, Equatable {
    package struct GPS: Sendable, Codable, Equatable {
        package var state: String
        package var detail: String?
        package var device: String?
        package var fixAgeSeconds: Double?
        package var horizontalAccuracy: Double?
    }

    package struct Monitor: Sendable, Codable, Equatable {
        package var name: String
        package var conditions: Int
        package var satisfied: Int
    }

    package var status: String
    package var fleet: String
    package var vehicle: String
    package var version: String
    package var pid: Int32
    package var updated: String
    package var startedAt: String
    package var broker: String
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
}
