import AgentFormats
import AgentOutputs
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Synchronization
import SystemMemory
import ThreadExecution

/// The part of the agent that decides: every fix goes through every monitor, and what changed is
/// committed through the outbox before the publisher may send anything. It owns the monitors; the
/// change applier adds and removes their conditions through `MonitorHost`, and the state reporter
/// reads a bounded `AgentSnapshot`. What is sent is the outputs' to say: it tells them what happened.
actor FixProcessor: MonitorHost, SnapshotSource {
    /// The processor shares the outbox's thread, which is the store's: a fix's commit needs no hop
    /// between threads (the store's blocking calls still never run on the cooperative pool).
    nonisolated let unownedExecutor: UnownedSerialExecutor
    private nonisolated let store: AgentStore
    private nonisolated let outbox: Outbox
    private let configuration: AgentConfiguration
    private let logger: Logger
    /// Names the place of each event, live update and status; nil when places are off or not loaded.
    private let places: (any PlaceFinding)?
    /// Every output the configuration turns on.
    private let outputs: MultiplexOutput
    /// Every monitor, fed each fix by the core's one loop (as `simulate` is).
    private var monitors: MonitorSet
    private var liveFilter: LiveUpdateFilter
    private var liveUpdatesStarted: Bool
    private var lastLocation: Location?
    private var lastStationary = false
    /// When `reportLocation` asked, until it is answered: by the next fix, or by the last one after
    /// `reportWait` without a fix.
    private var reportRequestedAt: ContinuousClock.Instant?
    /// How long an answer to `reportLocation` waits for a fresh fix before it settles for the last one.
    static let reportWait: Duration = .seconds(5)
    private var gpsStatus = GPSStatus(state: .connecting)
    private var storeProblem: String?
    /// Bumped by every change of a condition's state or of the set of conditions; the reporter
    /// publishes the state when it moved. Atomic: the reporter reads it four times a second without a
    /// hop to the store's thread.
    private nonisolated let generationCounter = Atomic<Int>(0)
    nonisolated var generation: Int { generationCounter.load(ordering: .relaxed) }
    /// Yields when the generation moves: the reporter waits on it rather than looking on a timer.
    nonisolated let stateChanges: AsyncStream<Void>
    private nonisolated let stateChangesContinuation: AsyncStream<Void>.Continuation
    /// Moved since the state loop was last told.
    private var stateChangeToSignal = false
    /// Moves the generation, which the round's gate reads at once; the state loop waits for
    /// `signalStateChange`.
    private func markStateChanged() {
        generationCounter.add(1, ordering: .relaxed)
        stateChangeToSignal = true
    }
    /// Tells the state loop. A fix's change is told once its commit is made (`complete`): told at the
    /// decision, the loop's job would run on this thread before the commit and the publisher's, and delay the
    /// events.
    private func signalStateChange() {
        guard stateChangeToSignal else { return }
        stateChangeToSignal = false
        stateChangesContinuation.yield()
    }

    /// Restores every monitor the store holds (and the default one) before any fix is evaluated.
    init(
        configuration: AgentConfiguration, store: AgentStore, outbox: Outbox, outputs: MultiplexOutput,
        places: (any PlaceFinding)? = nil, logger: Logger
    ) async throws {
        self.configuration = configuration
        self.places = places
        self.outputs = outputs
        self.store = store
        self.outbox = outbox
        unownedExecutor = outbox.unownedExecutor
        storeExecutor = store.taskExecutor
        self.logger = logger
        (stateChanges, stateChangesContinuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        liveFilter = LiveUpdateFilter(configuration: configuration.liveUpdates.configuration)
        let persisted = try await store.setting("liveUpdates.started")
        liveUpdatesStarted = persisted.map { $0 == "true" } ?? configuration.liveUpdates.startedByDefault
        var names = Set(try await store.monitorNames())
        names.insert(MonitorSet.defaultMonitor)
        // A trip in progress at the last stop (or crash) goes on from where the store left it.
        let trips = try await store.setting(Self.tripPhaseKey).flatMap { TripPhaseJSON.decode($0) } ?? .unknown
        monitors = MonitorSet(configuration: configuration.monitor, trips: trips)
        // The regions' octagons and masks are most of a restore's work: the monitors answer without them at
        // first, and `refineRestoredIndexes` adds them off this thread.
        for name in names.sorted() {
            monitors.insert(
                try await store.openMonitor(name, configuration: configuration.monitor, refineIndexLater: true))
        }
        logger.info(
            "monitors restored",
            metadata: ["monitors": "\(monitors.names.count)", "conditions": "\(monitors.conditionCount)"])
    }

    /// Works out each restored monitor's octagons and masks on a thread of its own while fixes go on, and
    /// puts them in its index. A condition added or removed meanwhile makes the work stale: it is done
    /// again, up to three times (a sync of thousands rebuilds the index whole anyway).
    func refineRestoredIndexes() async {
        let started = ContinuousClock.now
        var refined = 0
        for name in monitors.names {
            for _ in 0..<3 {
                guard let work = monitors[name]?.indexRefinementWork() else { break }
                // nil: the agent is stopping; nil inside: nothing left to refine.
                guard let refinement = await onOwnThread(name: "index-refinement", work) else { return }
                guard let refinement else { break }
                if monitors.withEngine(name, { $0.adoptIndexRefinement(refinement) }) == true {
                    refined += 1
                    break
                }
            }
        }
        guard refined > 0 else { return }
        // The placements worked out are freed now; give the heap back, as after the restore.
        HeapTrim.giveBackFreedMemory()
        logger.debug(
            "monitor indexes refined",
            metadata: ["monitors": "\(refined)", "took": "\(ContinuousClock.now - started)"])
    }

    /// The monitors whose index still waits for its octagons and masks.
    func monitorsAwaitingRefinement() -> [String] {
        monitors.names.filter { monitors[$0]?.indexNeedsRefinement == true }
    }

    /// The latest time a restored monitor accepted a fix: the timeline resumes after it.
    func latestFixTime() -> Date? { monitors.lastAcceptedFixTime }

    // MARK: Conditions (MonitorHost)

    func apply(_ changes: [AgentStore.ConditionChange], storingIn store: any ConditionStoring) throws(StoreError)
        -> [AgentStore.ChangeResult]
    {
        let removals = changes.compactMap { change -> (identifier: String, monitor: String?)? in
            guard case .remove(let identifier, let monitor) = change else { return nil }
            return (identifier, monitor)
        }
        let exits = monitors.removalExits(removals).map {
            RemovalExit(monitor: $0.monitor, event: $0.event, conditionVersion: $0.conditionVersion)
        }
        let results = try store.applyNow(changes, exits: exits)
        apply(MonitorChange.made(by: changes, results: results))
        return results
    }

    /// Gives the monitors conditions, or takes them away, without the store: the second half of the step above.
    func apply(_ changes: [MonitorChange]) {
        for change in changes {
            switch change {
            case .add(let monitor, let identifier, let condition):
                monitors.add(condition, identifier: identifier, monitor: monitor)
            case .remove(let monitor, let identifier):
                monitors.remove(identifier, monitor: monitor)
            }
        }
        guard !changes.isEmpty else { return }
        markStateChanged()
        signalStateChange()
    }

    func setLiveUpdates(_ started: Bool) {
        liveUpdatesStarted = started
    }

    /// Answered with the next fix, as OwnTracks' apps answer with a fresh one: a consumer that keeps only
    /// newer locations (OwnTracks Recorder's `last`) takes it, where the fix it already had would be
    /// refused as not newer. With no fix within `reportWait`, `answerOverdueReport` sends the last one.
    func reportLocation() async {
        if reportRequestedAt == nil { reportRequestedAt = .now }
    }

    /// A `reportLocation` that no fix has answered within `reportWait`: the last fix is the answer, with
    /// its own time (the receiver has nothing newer). Called by the reporter's round every second.
    func answerOverdueReport() async {
        guard let requested = reportRequestedAt, ContinuousClock.now - requested >= Self.reportWait else { return }
        reportRequestedAt = nil
        guard let lastLocation else {
            logger.notice("reportLocation: no fix to report")
            return
        }
        await enqueueLocation(LiveUpdate(location: lastLocation, isStationary: lastStationary), reason: .requested)
    }

    func heldConditions() -> [(identifier: String, condition: Condition)] {
        monitors.names.flatMap { name in monitors[name]!.records.map { ($0.identifier, $0.record.condition) } }
    }

    /// The conditions the vehicle is inside (at most 100 a monitor), when an output asks for them.
    private func insideConditions() -> [InsideCondition] {
        guard outputs.needsInsideConditions else { return [] }
        return monitors.names.flatMap { name in
            let engine = monitors[name]!
            return engine.summary(listing: 100).satisfied.map {
                InsideCondition(identifier: $0.identifier, name: engine.record(for: $0.identifier)?.condition.name)
            }
        }
    }

    // MARK: Fixes

    /// The latest fix any monitor accepted (restored from the store after a restart).
    var lastAcceptedFixTime: Date? { monitors.lastAcceptedFixTime }

    /// What a fix changed, waiting to be committed. Normally committed at once; while the disk is full they
    /// queue here in order (the engine has moved on) and are retried until the store takes them, so a
    /// transition made while nothing could be written is still recorded and delivered.
    private struct PendingCommit {
        var monitor: String
        var records: [(identifier: String, record: MonitorRecord)]
        var lastFix: Location?
        var indexFloor: Int?
        var removing: [String]
        var items: [OutboxItem]
        var settings: [(key: String, value: String?)] = []
    }
    /// The store's setting that holds the trip detector's phase.
    static let tripPhaseKey = "trips.phase"
    /// A trip's phase is stored with each trip event, at a stop, and this often (GPS time) while it goes on:
    /// a crash loses at most this much of a trip's distance. Each store is two pages of the log (about 8 kB):
    /// every 10 minutes that is 14 bytes a fix at 1 Hz (every 2 minutes cost 70, past the storage budget).
    static let tripPhaseInterval: TimeInterval = 600
    private var tripPhaseStoredAt: Date?
    private var pending: [PendingCommit] = []
    /// The last fix time committed per monitor in this run.
    private var recordedFixTimes: [String: Date] = [:]
    private var flushing = false
    static let maximumPendingCommits = 100_000

    /// The store's thread, where the processor runs: the agent's other loops prefer it too, so that what a
    /// fix sets going (a message to issue, the state to report) runs on without waking another thread.
    nonisolated let storeExecutor: ThreadExecutor

    /// Handles a fix whole: its decision, then what must wait for the store and the publisher.
    func handle(_ fix: Location) async {
        if decide(fix) { await complete() }
    }

    /// Follows the fixes a source delivers on the store's thread (`FixDelivery`): most are decided there as
    /// they come; this task takes the steps that wait, in order, until the delivery is finished.
    nonisolated func follow(_ delivery: FixDelivery) async {
        await withTaskExecutorPreference(storeExecutor) { await self.takeSteps(of: delivery) }
    }

    private func takeSteps(of delivery: FixDelivery) async {
        for await step in delivery.steps {
            switch step {
            case .fix(let fix): await handle(fix)
            case .complete: await complete()
            }
            delivery.outstanding.subtract(1, ordering: .relaxed)
        }
    }

    /// `decide(fix)` from the store's thread outside a job: a source's `fire`, between jobs, where nothing else
    /// of the processor's can run.
    nonisolated func decideOnStoreThread(_ fix: Location) -> Bool {
        onStoreThread { $0.decide(fix) }
    }

    /// Runs `body` isolated to the processor from the store's thread outside a job (a source's `fire`). The
    /// store's executor says the thread is isolated to it (`ThreadExecutor.isIsolatingCurrentContext`), so
    /// `assumeIsolated` holds there, and traps anywhere else.
    nonisolated func onStoreThread(_ body: (isolated FixProcessor) -> Bool) -> Bool {
        assumeIsolated(body)
    }

    /// A live update that `decide` found due, for `complete` to queue.
    private var dueLiveUpdate: LiveUpdate?

    /// The fix's decision, made without a suspension: the monitors, the commits it needs, the live update it
    /// makes. True when `complete()` must follow: something to commit or to queue.
    func decide(_ fix: Location) -> Bool {
        // The status's fix age counts from the last fix handled (a replay has no receiver to say so).
        gpsStatus.lastFixAtNanoseconds = fix.receivedAtNanoseconds ?? MonotonicClock.now()
        if fix.horizontalAccuracy > 0 { gpsStatus.lastHorizontalAccuracy = fix.horizontalAccuracy }
        let result = monitors.process(fix)
        // With the motion check's verdict, which the live updates carry.
        let location = result.location
        lastLocation = location
        if result.offered { outputs.count(.fix(rejected: result.rejection)) }
        for step in result.steps {
            let name = step.monitor
            let engine = monitors[name]!
            markStateChanged()
            // Only the conditions that had events: reading every record would cost O(n) per fix at 100k.
            var seen: Set<String> = []
            let records = step.events.compactMap { e -> (identifier: String, record: MonitorRecord)? in
                guard seen.insert(e.identifier).inserted, let r = engine.record(for: e.identifier) else { return nil }
                return (e.identifier, r)
            }
            // Every event moved a record; only those the condition's `notify` asks for are published.
            let notified = step.events.filter(\.isPublished)
            var messages = notified.flatMap { event in
                outputs.messages(
                    for: .event(
                        EventHappening(
                            event: event, monitor: name, origin: .fix,
                            conditionVersion: engine.record(for: event.identifier)?.condition.version,
                            place: places.map { $0.place(at: event.location.coordinate) })))
            }
            // Where the last transition happened: an output that shows what the vehicle is inside follows it.
            if let last = notified.last {
                messages += outputs.messages(
                    for: .location(
                        LocationHappening(
                            update: LiveUpdate(location: last.location, isStationary: false), reason: .transition,
                            place: nil,
                            inside: insideConditions())))
            }
            let items = messages.compactMap(\.outboxItem)
            if pending.count >= Self.maximumPendingCommits {
                pending.removeFirst()
                logger.error("too many state changes waiting for the store; the oldest is dropped")
            }
            pending.append(
                PendingCommit(
                    monitor: name, records: records, lastFix: engine.lastAcceptedFix, indexFloor: engine.indexFloor,
                    removing: step.expired, items: items))
        }
        queueTrips(result.tripEvents, at: location)
        if liveUpdatesStarted, let update = liveFilter.update(location) {
            lastStationary = update.isStationary
            dueLiveUpdate = update
        }
        // A state change always has a commit pending, so `complete` follows to tell it.
        return !pending.isEmpty || dueLiveUpdate != nil || reportRequestedAt != nil
    }

    /// The rest of the last fix decided: its commits (the publisher sends their events before anything else
    /// of the fix), its live update, and the answer to a `reportLocation`.
    private func complete() async {
        await flushPending()
        signalStateChange()
        if let update = dueLiveUpdate {
            dueLiveUpdate = nil
            await enqueueLocation(update, reason: .liveUpdate)
        }
        if reportRequestedAt != nil, let location = lastLocation {
            reportRequestedAt = nil
            await enqueueLocation(LiveUpdate(location: location, isStationary: lastStationary), reason: .requested)
        }
    }

    /// Queues the trip events' messages with the phase they leave, in one commit; while a trip goes on,
    /// its phase every `tripPhaseInterval`.
    private func queueTrips(_ events: [TripEvent], at location: Location) {
        let due: Bool
        if case .driving = monitors.trips.phase {
            due = location.timestamp.timeIntervalSince(tripPhaseStoredAt ?? .distantPast) >= Self.tripPhaseInterval
        } else {
            due = false
        }
        // Most fixes: nothing to queue, and no closure over the places (a copy of an existential) is made.
        guard !events.isEmpty || due else { return }
        let places = self.places
        let items = events.flatMap { event in
            outputs.messages(for: .trip(TripHappening(event: event, places: places))).compactMap(\.outboxItem)
        }
        pending.append(tripPhaseCommit(items: items))
        tripPhaseStoredAt = location.timestamp
    }

    private func tripPhaseCommit(items: [OutboxItem]) -> PendingCommit {
        PendingCommit(
            monitor: "", records: [], lastFix: nil, indexFloor: nil, removing: [], items: items,
            settings: [(Self.tripPhaseKey, TripPhaseJSON.encode(monitors.trips.phase))])
    }

    /// Stores each monitor's last fix, at a stop. A fix that changes nothing writes nothing (flash wears), so
    /// the store's last fix is otherwise the last transition's: a restart would resume a replay, and the
    /// timeline's floor, from there, and the vehicle's position would go back in time by as much.
    func recordLastFixes() async {
        for name in monitors.names {
            let engine = monitors[name]!
            guard let fix = engine.lastAcceptedFix, fix.timestamp > (recordedFixTimes[name] ?? .distantPast) else {
                continue
            }
            pending.append(
                PendingCommit(
                    monitor: name, records: [], lastFix: fix, indexFloor: engine.indexFloor, removing: [], items: []))
        }
        // With the trip's distance so far: a restart resumes it.
        if case .driving = monitors.trips.phase { pending.append(tripPhaseCommit(items: [])) }
        await flushPending()
    }

    /// Commits the waiting changes in order; stops at the first failure and reports it. The actor is
    /// reentrant across the store's `await`: a second caller (the status loop) must not commit the same
    /// change again, so only one flush runs at a time and it takes whatever was added meanwhile.
    func flushPending() async {
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        var committed = false
        while let next = pending.first {
            do {
                let started = outputs.observesCounts ? ContinuousClock.now : nil
                try await outbox.commit(
                    monitor: next.monitor, records: next.records, lastFix: next.lastFix, indexFloor: next.indexFloor,
                    removing: next.removing, settings: next.settings, items: next.items)
                if let started { outputs.count(.committed(latency: ContinuousClock.now - started)) }
                if let fix = next.lastFix { recordedFixTimes[next.monitor] = fix.timestamp }
                pending.removeFirst()
                committed = true
                // The publisher, woken by the commit, runs on this thread: let it send the events now, before
                // the rest of this fix (another commit, the live update) delays them.
                if !next.items.isEmpty { await Task.yield() }
            } catch {
                if storeProblem == nil {
                    logger.error(
                        "could not record a state change; it is kept and retried",
                        metadata: ["error": "\(error)", "waiting": "\(pending.count)"])
                }
                storeProblem = "\(error)"
                return
            }
        }
        if committed, storeProblem != nil {
            logger.notice("the store takes writes again; every waiting state change is recorded")
            storeProblem = nil
        }
    }

    /// Queues what the outputs send for a location: a live update, or an answer to a request.
    private func enqueueLocation(_ update: LiveUpdate, reason: LocationHappening.Reason) async {
        let places = self.places
        let messages = outputs.messages(
            for: .location(
                LocationHappening(
                    update: update, reason: reason,
                    placeLookup: { places.map { $0.place(at: update.location.coordinate) } },
                    inside: insideConditions())))
        do {
            try await outbox.enqueue(messages.compactMap(\.outboxItem))
        } catch {
            storeProblem = "\(error)"
            logger.error("could not queue a location update", metadata: ["error": "\(error)"])
        }
    }

    /// A new receiver state. The last fix's time and accuracy stay when it does not say them: the fix age
    /// must keep counting when the receiver falls silent.
    func gps(_ status: GPSStatus) {
        let last = gpsStatus
        gpsStatus = status
        if status.lastFixAtNanoseconds == nil { gpsStatus.lastFixAtNanoseconds = last.lastFixAtNanoseconds }
        if status.lastHorizontalAccuracy == nil { gpsStatus.lastHorizontalAccuracy = last.lastHorizontalAccuracy }
    }

    // MARK: Snapshot (SnapshotSource)

    /// The present in bounded size: counts, and at most `limit` satisfied and unknown conditions per
    /// monitor. Costs O(watched conditions), never O(all conditions).
    func snapshot(listing limit: Int) async -> AgentSnapshot {
        AgentSnapshot(
            generation: generation, monitors: monitors.names.map { monitors[$0]!.summary(listing: limit) },
            gps: gpsStatus, storeProblem: storeProblem, waitingStateChanges: waitingStateChanges,
            liveUpdates: liveUpdatesStarted,
            outbox: await outbox.stats)
    }

    /// State changes that wait for a store that refused them. A commit in flight between two of this actor's
    /// awaits is not waiting: counted, it would change the status twice a transition, and rewrite its file.
    private var waitingStateChanges: Int { storeProblem == nil ? 0 : pending.count }

    /// The monitors' names and condition counts as of a generation: the round reads them every second, and
    /// reading them from the monitors copied the whole set (an outlined copy of every engine's references).
    /// Both change only with the generation (a condition added, removed or expired).
    private var countsCache: (generation: Int, names: [String], counts: [Int]) = (-1, [], [])

    func statusInputs() async -> StatusInputs {
        statusInputs(outbox: await outbox.stats)
    }

    /// `statusInputs()` without entering the outbox: its figures as of its last operation. The round's gate
    /// reads them so when no acknowledgement waits to be taken in, which is when they are the same.
    func statusInputsWithoutEnteringTheOutbox() -> StatusInputs {
        statusInputs(outbox: outbox.statsWithoutWaitingAcknowledgements)
    }

    private func statusInputs(outbox stats: OutboxStats) -> StatusInputs {
        if countsCache.generation != generation {
            countsCache = (generation, monitors.names, monitors.conditionCounts)
        }
        return StatusInputs(
            gps: gpsStatus, monitors: countsCache.names, conditions: countsCache.counts,
            storeProblem: storeProblem, waitingStateChanges: waitingStateChanges, liveUpdates: liveUpdatesStarted,
            outbox: stats)
    }

    /// Whether the round has the processor's own work to do: changes waiting for the store to take them
    /// (`flushPending`), or a `reportLocation` waiting for its answer (`answerOverdueReport`).
    var roundHasWork: Bool { !pending.isEmpty || reportRequestedAt != nil }

    func lastPlace() -> PlaceSummary? {
        lastLocation.flatMap { location in places?.place(at: location.coordinate) }
    }

    /// Every record of one monitor (or of all), for a dashboard that asks for the full detail.
    func records(monitor: String?) -> [(monitor: String, identifier: String, record: MonitorRecord)] {
        monitors.names.filter { monitor == nil || $0 == monitor }.flatMap { name in
            monitors[name]!.records.map { (name, $0.identifier, $0.record) }
        }
    }
}
