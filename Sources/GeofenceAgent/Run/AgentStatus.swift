import Foundation
import GeofenceStore
import GPSD

/// What `geofence-agent status` and the retained status topic show.
public struct AgentStatus: Sendable, Codable, Equatable {
    public struct GPS: Sendable, Codable, Equatable {
        public var state: String
        public var detail: String?
        public var device: String?
        public var fixAgeSeconds: Double?
        public var horizontalAccuracy: Double?
    }

    public struct Monitor: Sendable, Codable, Equatable {
        public var name: String
        public var conditions: Int
        public var satisfied: Int
    }

    public var status: String
    public var fleet: String
    public var vehicle: String
    public var version: String
    public var pid: Int32
    public var updated: String
    public var startedAt: String
    public var broker: String
    public var gps: GPS
    public var monitors: [Monitor]
    public var conditions: Int
    public var outbox: OutboxStats
    public var outboxCaps: OutboxLimits
    public var store: String
    public var storeProblem: String?
    /// State changes made but not yet written (the store refused writes, e.g. a full disk).
    public var waitingStateChanges: Int
    public var liveUpdates: Bool
    /// The place of the last fix (places on, a fix seen); absent otherwise.
    public var place: PlaceSummary?
}
