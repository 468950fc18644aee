import Foundation

/// What the location source knows about gpsd and the receiver, for the agent's status topic and for
/// `geofence-agent status`.
public struct GPSStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable, CaseIterable {
        /// Not started, or connecting for the first time.
        case connecting
        /// gpsd cannot be reached; retrying with backoff. `detail` has libgps's reason.
        case gpsdUnavailable
        /// Connected, but gpsd has no receiver.
        case noDevice
        /// Connected, but nothing has arrived for the no-data timeout: a dead or missing receiver.
        case noData
        /// The receiver reports no fix.
        case noFix
        /// Fixes arrive.
        case fix
        /// The followed receiver went away (unplugged, or its feed ended).
        case deviceRemoved
        case stopped
    }

    public var state: State
    public var detail: String?
    public var device: String?
    /// Monotonic nanoseconds of the last fix delivered, for the fix age.
    public var lastFixAtNanoseconds: UInt64?
    public var lastHorizontalAccuracy: Double?

    public init(
        state: State, detail: String? = nil, device: String? = nil,
        lastFixAtNanoseconds: UInt64? = nil, lastHorizontalAccuracy: Double? = nil
    ) {
        self.state = state
        self.detail = detail
        self.device = device
        self.lastFixAtNanoseconds = lastFixAtNanoseconds
        self.lastHorizontalAccuracy = lastHorizontalAccuracy
    }
}
