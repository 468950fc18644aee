import Foundation

/// What a condition asks of its monitor beyond its shape: which of its events to publish, when it ends,
/// the speed limit inside it, and when it is active. Set as GeoJSON properties (`notify`, `expires`,
/// `speedLimit`, `schedule`);
/// docs/conditions.md describes each.
public struct ConditionRules: Sendable, Equatable {
    /// The event kinds to publish, as `CLCircularRegion`'s `notifyOnEntry` and `notifyOnExit` (nil: every
    /// kind). The state is tracked and stored regardless, so a condition that notifies only on `exit`
    /// still knows it is satisfied.
    public var notify: Set<EventKind>?
    /// When the condition ends, on the fixes' timeline (Android's `setExpirationDuration`): the first fix
    /// at or after it removes the condition, with an `exit` (reason `expired`) when it was satisfied.
    public var expires: Date?
    /// A speed zone's limit in km/h, while the vehicle is inside (`overspeed`, `overspeedEnded`).
    public var speedLimit: Double?
    /// When the condition is active (Traccar's calendars); nil: always.
    public var schedule: Schedule?

    public init(
        notify: Set<EventKind>? = nil, expires: Date? = nil, speedLimit: Double? = nil, schedule: Schedule? = nil
    ) {
        self.notify = notify
        self.expires = expires
        self.speedLimit = speedLimit
        self.schedule = schedule
    }

    /// Whether events of this kind are published.
    public func notifies(_ kind: EventKind) -> Bool {
        notify?.contains(kind) ?? true
    }

    public var isEmpty: Bool { notify == nil && expires == nil && speedLimit == nil && schedule == nil }
}
