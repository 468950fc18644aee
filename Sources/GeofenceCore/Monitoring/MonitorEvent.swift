import Foundation

/// A condition's state, as `CLMonitor.Event.State`.
public enum ConditionState: String, Sendable, Equatable, Codable {
    case unknown
    case satisfied
    case unsatisfied
}

/// What happened to a condition.
public enum EventKind: String, Sendable, Equatable, Codable, CaseIterable {
    /// The state became known for the first time.
    case initial
    case enter
    case exit
    /// The state has stayed satisfied for the condition's dwell time.
    case dwell
    /// The straight path between two consecutive fixes passed through the condition, though neither
    /// fix was inside it: a fast vehicle passing a small fence.
    case crossed
    /// The vehicle has been faster than a speed zone's limit (plus the tolerance) for the minimum duration.
    case overspeed
    /// The overspeed ended: the speed came back under the limit, or the vehicle left every speed zone.
    case overspeedEnded
    /// The condition's schedule opened: its state now, like `initial`, for a vehicle already inside.
    case active
    /// The condition's schedule closed: no transitions are published until it opens again.
    case inactive
}

extension EventKind {
    /// The kind's bit in the store's compact form (`ConditionCodec`): fixed for ever, whatever the order
    /// of the cases.
    var codecBit: UInt16 {
        switch self {
        case .initial: 1
        case .enter: 2
        case .exit: 4
        case .dwell: 8
        case .crossed: 16
        case .overspeed: 32
        case .overspeedEnded: 64
        case .active: 128
        case .inactive: 256
        }
    }
}

/// Why an `exit` happened when the vehicle did not leave.
public enum TransitionReason: String, Sendable, Equatable, Codable {
    /// The condition was deleted (an empty retained message, `conditions remove`).
    case removed
    /// The condition's `expires` time passed.
    case expired
}

/// One event of a monitor, shaped like `CLMonitor.Event`, with the fix that caused it.
public struct MonitorEvent: Sendable, Equatable, Codable {
    public var identifier: String
    public var kind: EventKind
    /// The condition's state after the event.
    public var state: ConditionState
    /// The time of the fix that caused it.
    public var date: Date
    public var location: Location
    /// The condition's `name`, if it has one.
    public var conditionName: String?
    /// Set on an `exit` that the condition's removal or expiry caused.
    public var reason: TransitionReason?
    /// On `overspeed` and `overspeedEnded`: the limit, and the speeds over the episode so far.
    public var overspeed: OverspeedDetail?
    /// Whether the condition's `notify` asks for events of this kind. An event it does not ask for still
    /// moved the record (which the agent stores) but is not published.
    public var isNotified: Bool

    public init(
        identifier: String, kind: EventKind, state: ConditionState, date: Date, location: Location,
        conditionName: String? = nil,
        reason: TransitionReason? = nil, overspeed: OverspeedDetail? = nil, isNotified: Bool = true
    ) {
        self.reason = reason
        self.overspeed = overspeed
        self.isNotified = isNotified
        self.identifier = identifier
        self.kind = kind
        self.state = state
        self.date = date
        self.location = location
        self.conditionName = conditionName
    }
}

extension MonitorEvent {
    /// The `exit` (reason `removed`) of a condition deleted while the vehicle was inside, at the last fix:
    /// the monitor's and the store's, which writes it in the delete's transaction, are this one event.
    public static func removalExit(_ identifier: String, condition: Condition?, at fix: Location) -> MonitorEvent {
        MonitorEvent(
            identifier: identifier, kind: .exit, state: .unsatisfied, date: fix.timestamp, location: fix,
            conditionName: condition?.name, reason: .removed, isNotified: condition?.rules.notifies(.exit) ?? true)
    }
}

/// A condition's record, as `CLMonitor.Record`: the condition and its last event.
public struct MonitorRecord: Sendable, Equatable {
    public var condition: Condition
    public var state: ConditionState
    /// When the current state began (the fix time), or nil while unknown.
    public var since: Date?
    public var lastEvent: MonitorEvent? {
        get { boxedLastEvent?.value }
        set { boxedLastEvent = newValue.map(Boxed.init) }
    }
    /// Boxed: inline, the event (and its fix) made every record 296 bytes larger, and a monitor holds
    /// 100,000 records, most of them with no event yet.
    private var boxedLastEvent: Boxed<MonitorEvent>?
    /// Whether the dwell event for the current stay has been delivered.
    public var dwellReported: Bool

    public init(
        condition: Condition, state: ConditionState = .unknown, since: Date? = nil, lastEvent: MonitorEvent? = nil,
        dwellReported: Bool = false
    ) {
        self.condition = condition
        self.state = state
        self.since = since
        boxedLastEvent = lastEvent.map(Boxed.init)
        self.dwellReported = dwellReported
    }
}
