import AsyncBroadcast
import Foundation

/// A named set of geographic conditions and their states, shaped like Core Location's `CLMonitor`.
///
/// ```swift
/// let monitor = Monitor("fleet")
/// await monitor.add(try .circle(center: depot, radius: 150), identifier: "depot")
/// for await event in monitor.events {
///     print(event.identifier, event.kind, event.state)
/// }
/// ```
///
/// Fixes arrive through `update(with:)` (the agent feeds it from gpsd). Each accepted fix changes a
/// condition's state only when it is confidently inside or outside; see `MonitorEngine`.
public actor Monitor {
    public nonisolated let name: String
    /// A set of this one monitor: a `Monitor` is driven by the loop the agent and `simulate` share.
    private var monitors: MonitorSet
    private var engine: MonitorEngine { monitors[name]! }
    private nonisolated let broadcaster = Broadcaster<MonitorEvent>()

    /// Creates an empty monitor.
    public init(_ name: String, configuration: MonitorConfiguration = MonitorConfiguration()) {
        self.name = name
        monitors = MonitorSet(configuration: configuration)
        monitors.insert(MonitorEngine(name: name, configuration: configuration))
    }

    /// Creates a monitor around an engine restored from storage.
    public init(restoring engine: MonitorEngine) {
        name = engine.name
        monitors = MonitorSet(configuration: engine.configuration)
        monitors.insert(engine)
    }

    /// Every event from now on. Each call returns a new sequence; each sequence sees every event.
    public nonisolated var events: AsyncStream<MonitorEvent> { broadcaster.stream() }

    /// Adds a condition under an identifier, replacing any condition with that identifier.
    /// `assuming` sets the initial state, as Core Location's `add(_:identifier:assuming:)`.
    public func add(_ condition: Condition, identifier: String, assuming state: ConditionState = .unknown)
        throws(ConditionError)
    {
        if let problem = IdentifierRules.problem(with: identifier, what: "identifier") {
            throw ConditionError(path: "identifier", message: problem)
        }
        monitors.withEngine(name) { $0.add(condition, identifier: identifier, assuming: state) }
    }

    /// Stops monitoring a condition. A vehicle inside it gets an `exit` (reason `removed`) at the last
    /// fix, which is also returned.
    @discardableResult
    public func remove(_ identifier: String) -> MonitorEvent? {
        let exit = engine.removalExit(identifier)
        monitors.withEngine(name) { $0.remove(identifier) }
        if let exit, exit.isNotified { broadcaster.yield(exit) }
        return exit
    }

    /// The condition and its last event, as `CLMonitor.record(for:)`.
    public func record(for identifier: String) -> MonitorRecord? {
        engine.record(for: identifier)
    }

    /// The identifiers of every monitored condition, sorted.
    public var identifiers: [String] { engine.identifiers }

    /// Offers a fix. Accepted fixes update states and deliver the events their conditions' `notify`
    /// asks for to every `events` sequence; the outcome lists every event.
    @discardableResult
    public func update(with location: Location) -> FixOutcome {
        let result = monitors.process(location)
        let outcome: FixOutcome =
            result.rejection.map(FixOutcome.rejected) ?? .accepted(result.steps.first?.events ?? [])
        for event in outcome.events where event.isNotified { broadcaster.yield(event) }
        return outcome
    }

    /// Ends every `events` sequence.
    public func finish() {
        broadcaster.finish()
    }

    /// A copy of the state machine, for persisting.
    public var snapshot: MonitorEngine { engine }
}
