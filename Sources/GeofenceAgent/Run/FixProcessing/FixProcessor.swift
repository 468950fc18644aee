import AgentFormats
import AgentOutputs
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Places
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
    /// Live updates and answers to `reportLocation`.
    private var locations: LocationReports
    /// The changes decided and not yet in the store, in order.
    private var commits = CommitQueue()
    private var tripPhase = TripPhaseRecorder()
    /// How long an answer to `reportLocation` waits for a fresh fix before it settles for the last one.
    static let reportWait = LocationReports.reportWait
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
        let persisted = try await store.setting("liveUpdates.started")
        locations = LocationReports(
            filter: LiveUpdateFilter(configuration: configuration.liveUpdates.configuration),
            started: persisted.map { $0 == "true" } ?? configuration.liveUpdates.startedByDefault)
        var names = Set(try await store.monitorNames())
        names.insert(MonitorSet.defaultMonitor)
        // A trip in progress at the last stop (or crash) goes on from where the store left it.
        let trips = try await store.setting(TripPhaseRecorder.key).flatMap { TripPhaseJSON.decode($0) } ?? .unknown
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
        locations.started = started
    }

    /// Answered with the next fix (`LocationReports.request`); with no fix within `reportWait`,
    /// `answerOverdueReport` sends the last one.
    func reportLocation() async {
        locations.request()
    }

    /// A `reportLocation` that no fix has answered within `reportWait`: the last fix is the answer, with
    /// its own time (the receiver has nothing newer). Called by the reporter's round every second.
    func answerOverdueReport() async {
        switch locations.takeOverdue() {
        case nil: return
        case .noFix: logger.notice("reportLocation: no fix to report")
        case .answer(let update): await enqueueLocation(update, reason: .requested)
        }
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

    private var flushing = false

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

    /// The fix's decision, made without a suspension: the monitors, the commits it needs, the live update it
    /// makes. True when `complete()` must follow: something to commit or to queue.
    func decide(_ fix: Location) -> Bool {
        // The status's fix age counts from the last fix handled (a replay has no receiver to say so).
        gpsStatus.lastFixAtNanoseconds = fix.receivedAtNanoseconds ?? MonotonicClock.now()
        if fix.horizontalAccuracy > 0 { gpsStatus.lastHorizontalAccuracy = fix.horizontalAccuracy }
        let result = monitors.process(fix)
        if result.offered { outputs.count(.fix(rejected: result.rejection)) }
        for step in result.steps {
            markStateChanged()
            queue(
                PendingCommit(
                    step: step, engine: monitors[step.monitor]!, outputs: outputs, places: places,
                    inside: insideConditions))
        }
        // Most fixes: no trip commit is due, and neither the outputs nor the places are handed over.
        if tripPhase.isDue(result.tripEvents, phase: monitors.trips.phase, at: result.location),
            let trip = tripPhase.commit(
                for: result.tripEvents, phase: monitors.trips.phase, at: result.location, outputs: outputs,
                places: places)
        {
            queue(trip)
        }
        // With the motion check's verdict, which the live updates carry. A state change always has a commit
        // pending, so `complete` follows to tell it.
        return locations.observe(result.location) || !commits.isEmpty
    }

    private func queue(_ commit: PendingCommit) {
        if commits.append(commit) {
            logger.error("too many state changes waiting for the store; the oldest is dropped")
        }
    }

    /// The rest of the last fix decided: its commits (the publisher sends their events before anything else
    /// of the fix), its live update, and the answer to a `reportLocation`.
    private func complete() async {
        await flushPending()
        signalStateChange()
        for (update, reason) in locations.takeDue() { await enqueueLocation(update, reason: reason) }
    }

    /// Stores each monitor's last fix, at a stop (`CommitQueue.appendLastFixes`), with the trip's distance
    /// so far: a restart resumes it.
    func recordLastFixes() async {
        commits.appendLastFixes(of: monitors)
        if case .driving = monitors.trips.phase { queue(PendingCommit(tripPhase: monitors.trips.phase, items: [])) }
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
        while let next = commits.first {
            do {
                let started = outputs.observesCounts ? ContinuousClock.now : nil
                try await outbox.commit(
                    monitor: next.monitor, records: next.records, lastFix: next.lastFix, indexFloor: next.indexFloor,
                    removing: next.removing, settings: next.settings, items: next.items)
                if let started { outputs.count(.committed(latency: ContinuousClock.now - started)) }
                commits.firstCommitted()
                committed = true
                // The publisher, woken by the commit, runs on this thread: let it send the events now, before
                // the rest of this fix (another commit, the live update) delays them.
                if !next.items.isEmpty { await Task.yield() }
            } catch {
                if storeProblem == nil {
                    logger.error(
                        "could not record a state change; it is kept and retried",
                        metadata: ["error": "\(error)", "waiting": "\(commits.count)"])
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
            liveUpdates: locations.started,
            outbox: await outbox.stats)
    }

    /// State changes that wait for a store that refused them. A commit in flight between two of this actor's
    /// awaits is not waiting: counted, it would change the status twice a transition, and rewrite its file.
    private var waitingStateChanges: Int { storeProblem == nil ? 0 : commits.count }

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
        statusInputs(outbox: outbox.assumeIsolated { $0.statsWithoutWaitingAcknowledgements })
    }

    private func statusInputs(outbox stats: OutboxStats) -> StatusInputs {
        if countsCache.generation != generation {
            countsCache = (generation, monitors.names, monitors.conditionCounts)
        }
        return StatusInputs(
            gps: gpsStatus, monitors: countsCache.names, conditions: countsCache.counts,
            storeProblem: storeProblem, waitingStateChanges: waitingStateChanges, liveUpdates: locations.started,
            outbox: stats)
    }

    /// Whether the round has the processor's own work to do: changes waiting for the store to take them
    /// (`flushPending`), or a `reportLocation` waiting for its answer (`answerOverdueReport`).
    var roundHasWork: Bool { !commits.isEmpty || locations.isRequested }

    func lastPlace() -> PlaceSummary? {
        locations.last.flatMap { location in places?.place(at: location.coordinate) }
    }

    /// Every record of one monitor (or of all), for a dashboard that asks for the full detail.
    func records(monitor: String?) -> [(monitor: String, identifier: String, record: MonitorRecord)] {
        monitors.names.filter { monitor == nil || $0 == monitor }.flatMap { name in
            monitors[name]!.records.map { (name, $0.identifier, $0.record) }
        }
    }
}
