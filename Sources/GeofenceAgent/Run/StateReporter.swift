import AgentFormats
import AgentOutputs
import Foundation
import GPSD
import GeofenceCore
import GeofenceStore
import Logging
import Mosquitto
import Places
import Synchronization

/// Reports what the agent is doing: the status file (beside the store, or `store.statusFile`; broker or not),
/// the retained `status` and the retained `state` summary (when connected), and the full state per
/// monitor on request. Reads the present through `SnapshotSource`, in bounded size, never on the fix
/// path's own schedule: a fix only bumps a generation number.
actor StateReporter {
    private let source: any SnapshotSource
    private let publisher: any MessagePublishing
    /// Where the status, the state and its detail go.
    private let control: ControlPlane
    private let configuration: AgentConfiguration
    private let paths: StorePaths
    private let logger: Logger
    private let startedAt = Date()
    /// The broker's connection state, as text for the status (the client's own description).
    private let brokerDescription: @Sendable () -> String
    /// Whether the broker can give the vehicle its geofences (`SyncCheckService.description`).
    private let geofenceSync: @Sendable () -> String?
    /// Whether the geofences held match their sets' manifests (`ManifestCheck.description`).
    private let geofenceSet: @Sendable () -> String?
    /// Told each status written (every second): Prometheus' gauges follow it.
    private let outputs: MultiplexOutput
    private var publishedGeneration = -1
    /// What the last status published and written said, without what changes by itself, and when: the
    /// times apart, so that the round's every-second look at them copies no status.
    private var published: AgentStatus?
    private var written: AgentStatus?
    /// When the status was last published and written, and the inputs it was settled for: read by the
    /// round's gate from the processor's isolation without entering this actor (`needsRound`).
    private nonisolated let gate = Mutex(Gate())
    private struct Gate {
        /// `MonotonicClock`'s nanoseconds: compared every second, without a `Duration`'s 128-bit arithmetic.
        var publishedAt: UInt64?
        var writtenAt: UInt64?
        /// The inputs of the last status the round built and sent wherever it was due.
        var settledInputs: RoundInputs?
    }
    /// The status file is replaced when something in it changed, else this often: a flash card wears with
    /// every write. `geofence-agent status` ages the fix by the file's own age.
    static let statusFileInterval: Duration = .seconds(30)
    private static let statusFileNanoseconds = nanoseconds(statusFileInterval)
    /// Set once the agent's services run: before that, a status file would say "running" too early.
    private var running = false
    /// Why the status file was last not written, once logged.
    private var statusFileProblem: String?

    /// The largest `state` or detail message: a dashboard's MQTT client and the broker's limits stay
    /// comfortable whatever the number of conditions.
    static let maximumMessageBytes = Payloads.maximumStateBytes
    /// Satisfied and unknown conditions listed per monitor in `state` before it says "truncated".
    static let listing = 500

    init(
        source: any SnapshotSource, publisher: any MessagePublishing, topics: Topics, configuration: AgentConfiguration,
        outputs: MultiplexOutput = MultiplexOutput([]), logger: Logger,
        brokerDescription: @escaping @Sendable () -> String, geofenceSync: @escaping @Sendable () -> String? = { nil },
        geofenceSet: @escaping @Sendable () -> String? = { nil }
    ) {
        self.outputs = outputs
        self.source = source
        self.publisher = publisher
        control = ControlPlane(topics: topics)
        self.configuration = configuration
        paths = configuration.storePaths
        self.logger = logger
        self.brokerDescription = brokerDescription
        self.geofenceSync = geofenceSync
        self.geofenceSet = geofenceSet
        statusHeartbeat = Self.nanoseconds(
            .seconds(configuration.outputs[FleetTopicsSettings.self].statusHeartbeatSeconds))
    }

    // MARK: Status

    func status(online: Bool) async -> AgentStatus {
        let snapshot = await source.snapshot(listing: 0)
        return status(snapshot, online: online, place: await source.lastPlace())
    }

    private func status(_ s: AgentSnapshot, online: Bool, place: PlaceSummary?) -> AgentStatus {
        let now = MonotonicClock.now()
        return AgentStatus(
            status: online ? "online" : "offline", fleet: configuration.fleet, vehicle: configuration.vehicle,
            version: AgentVersion.string, pid: getpid(), updated: iso8601(Date()), startedAt: iso8601(startedAt),
            broker: brokerDescription(), geofenceSync: geofenceSync(), geofenceSet: geofenceSet(),
            gps: .init(
                state: s.gps.state.rawValue, detail: s.gps.detail, device: s.gps.device,
                fixAgeSeconds: s.gps.lastFixAtNanoseconds.map { Double(now &- $0) / 1e9 },
                horizontalAccuracy: s.gps.lastHorizontalAccuracy),
            monitors: s.monitors.map { .init(name: $0.name, conditions: $0.conditions, satisfied: $0.satisfiedCount) },
            conditions: s.conditions, outbox: s.outbox, outboxCaps: configuration.outbox,
            store: configuration.storePath,
            storeProblem: s.storeProblem, waitingStateChanges: s.waitingStateChanges, liveUpdates: s.liveUpdates,
            place: place)
    }

    /// The agent's services run from now on: the status file is kept from here, its directory made as the
    /// store's is (`/run/geofence-agent` for an agent that is not under systemd).
    func start() {
        running = true
        let directory = (paths.status as NSString).deletingLastPathComponent
        guard !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) else { return }
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            logger.warning("status file's directory not made", metadata: ["path": "\(directory)", "error": "\(error)"])
        }
    }

    /// Conditions changed: the status file shows the new counts at once (a sync's progress).
    func conditionsChanged() async {
        if running { await writeStatusFile(online: true, force: true) }
    }

    /// What in a status matters to its reader, without what changes by itself (times, ages, rows in flight).
    /// Whatever it keeps that can change must be read by the round's gate too (`StatusInputs`, the broker's
    /// state, the geofences' sync): else a change waits for the next heartbeat.
    static func material(_ status: AgentStatus) -> AgentStatus {
        var m = status
        m.updated = ""
        m.gps.fixAgeSeconds = nil
        m.gps.horizontalAccuracy = nil
        m.outbox.rows = 0
        m.outbox.bytes = 0
        m.outbox.transitions = 0
        m.outbox.locations = 0
        // The `state` topic follows what the vehicle is inside; the status need not go with every transition.
        for index in m.monitors.indices { m.monitors[index].satisfied = 0 }
        m.place = nil
        return m
    }

    /// The status file beside the store, replaced atomically, for `geofence-agent status`: when something in
    /// it changed, every `statusFileInterval`, or when `force`d. The outputs are told every call.
    func writeStatusFile(online: Bool, force: Bool = false) async {
        let status = await status(online: online)
        outputs.tell(.status(status))
        let material = Self.material(status)
        let writtenAt = gate.withLock { $0.writtenAt }
        let now = MonotonicClock.now()
        guard force || Self.isDue(written, writtenAt, material, now: now, every: Self.statusFileNanoseconds)
        else { return }
        writeStatusFile(status, material: material)
    }

    /// The reporter's every-second round: one status, read once, to the file and the broker when each is due.
    /// A status is built only when what it says may have changed (`StatusInputs`, the broker's state, the
    /// geofences' sync), a heartbeat is due, or an output follows every status (Prometheus' gauges): at a
    /// vehicle's 1 Hz the rest of the seconds cost a few reads. Where the vehicle is (a gazetteer lookup) is
    /// looked up only for a status that goes out.
    func reportStatus() async {
        let inputs = roundInputs(await source.statusInputs())
        guard needsRound(inputs) else { return }
        await reportStatus(inputs)
    }

    /// What the round reads every second, from the processor's present.
    nonisolated func roundInputs(_ present: StatusInputs) -> RoundInputs {
        RoundInputs(present: present, broker: brokerDescription(), sync: geofenceSync(), set: geofenceSet())
    }

    /// Whether the round must build a status: an output follows every one, a heartbeat is due, or what it
    /// says may have changed since the last one settled. Nonisolated: the round asks from the processor's
    /// isolation, and enters this actor only when the answer is yes.
    nonisolated func needsRound(_ inputs: RoundInputs) -> Bool {
        if outputs.observesStatus { return true }
        let now = MonotonicClock.now()
        let connected = publisher.isConnected
        return gate.withLock { g in
            Self.isStale(g.writtenAt, now: now, every: Self.statusFileNanoseconds)
                || connected && Self.isStale(g.publishedAt, now: now, every: statusHeartbeat)
                || g.settledInputs != inputs
        }
    }

    /// The round's status for `inputs`, once `needsRound` said so: to the file and the broker when each is
    /// due.
    func reportStatus(_ inputs: RoundInputs) async {
        var status = status(await source.snapshot(listing: 0), online: true, place: nil)
        outputs.tell(.status(status))
        let material = Self.material(status)
        let now = MonotonicClock.now()
        let (writtenAt, publishedAt) = gate.withLock { ($0.writtenAt, $0.publishedAt) }
        let fileDue = Self.isDue(written, writtenAt, material, now: now, every: Self.statusFileNanoseconds)
        let publishDue =
            publisher.isConnected && Self.isDue(published, publishedAt, material, now: now, every: statusHeartbeat)
        guard fileDue || publishDue else {
            gate.withLock { $0.settledInputs = inputs }
            return
        }
        status.place = await source.lastPlace()
        if fileDue { writeStatusFile(status, material: material) }
        if publishDue { await publishStatus(status, material: material) }
        // A status the broker did not take is tried again at the next round, not at the heartbeat.
        let settled = publishDue && published != material ? nil : inputs
        gate.withLock { $0.settledInputs = settled }
    }

    /// What the round reads every second to tell whether a status may have changed.
    struct RoundInputs: Equatable, Sendable {
        var present: StatusInputs
        var broker: String
        var sync: String?
        var set: String?
    }

    /// Whether a status goes out: its material changed since `last`, or `every` has passed.
    private static func isDue(
        _ last: AgentStatus?, _ lastAt: UInt64?, _ material: AgentStatus, now: UInt64, every interval: UInt64
    ) -> Bool {
        last != material || isStale(lastAt, now: now, every: interval)
    }

    /// Whether `every` has passed since `last` (or there was none): a heartbeat is due.
    private static func isStale(_ last: UInt64?, now: UInt64, every interval: UInt64) -> Bool {
        guard let last else { return true }
        return now &- last >= interval
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// `fleetTopics.statusHeartbeatSeconds` in nanoseconds, read once: the round asks every second.
    private let statusHeartbeat: UInt64

    /// The status file's encoder, made once: sorted and indented for a technician's eyes.
    private let statusFileEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }()

    private func writeStatusFile(_ status: AgentStatus, material: AgentStatus) {
        written = material
        // Sent outside the round (forced), it may say what the round's settled inputs do not: the round
        // builds its next status instead of trusting them.
        gate.withLock {
            $0.writtenAt = MonotonicClock.now()
            $0.settledInputs = nil
        }
        do {
            try ReplacedFile.write(try statusFileEncoder.encode(status), to: paths.status)
            statusFileProblem = nil
        } catch {
            // Said once, not every 30 s, until the file is written again.
            let problem = "\(error)"
            guard problem != statusFileProblem else { return }
            statusFileProblem = problem
            logger.warning("status file not written", metadata: ["path": "\(paths.status)", "error": "\(problem)"])
        }
    }

    /// The retained status, while connected. While the broker is away nothing is queued: a status is a
    /// snapshot, and a fresh one goes out when the connection returns.
    /// Sent when something in it changed (the broker's or the receiver's state, the conditions, a drop),
    /// when `force`d (after each reconnect), and at least every `fleetTopics.statusHeartbeatSeconds`: every
    /// status costs about 1.5 kB on the wire.
    func publishStatus(force: Bool = false) async {
        guard publisher.isConnected else { return }
        let status = await status(online: true)
        let material = Self.material(status)
        let publishedAt = gate.withLock { $0.publishedAt }
        guard force || Self.isDue(published, publishedAt, material, now: MonotonicClock.now(), every: statusHeartbeat)
        else { return }
        await publishStatus(status, material: material)
    }

    private func publishStatus(_ status: AgentStatus, material: AgentStatus) async {
        guard let message = control.status(status) else { return }
        do {
            try await publisher.publish(message)
            published = material
            gate.withLock {
                $0.publishedAt = MonotonicClock.now()
                $0.settledInputs = nil
            }
        } catch {
            logger.debug("status not published", metadata: ["error": "\(error)"])
        }
    }

    // MARK: State

    /// Publishes the retained `state` summary when something changed since the last one (or when
    /// `force`d, after a reconnect).
    func publishStateIfChanged(force: Bool = false) async {
        guard publisher.isConnected else { return }
        // The generation first: reading it costs nothing, a summary one pass over the watched conditions.
        let generation = await source.generation
        guard force || generation != publishedGeneration else { return }
        let snapshot = await source.snapshot(listing: Self.listing)
        do {
            try await publisher.publish(control.state(snapshot.monitors))
            publishedGeneration = snapshot.generation
        } catch {
            logger.debug("state not published", metadata: ["error": "\(error)"])
        }
    }

    /// The full state on request (`reportState`): every condition of one monitor (or of all) with its
    /// state and since, on `state/detail`, in pages of at most `maximumMessageBytes`. Not retained.
    func publishDetail(monitor: String?) async {
        guard publisher.isConnected else { return }
        let records = await source.records(monitor: monitor)
        let pages = Self.detailPages(records, vehicle: configuration.vehicle)
        for page in pages {
            do { try await publisher.publish(control.stateDetail(page)) } catch {
                logger.debug("state detail not published", metadata: ["error": "\(error)"])
                return
            }
        }
        logger.info(
            "state detail published",
            metadata: ["monitor": "\(monitor ?? "all")", "conditions": "\(records.count)", "pages": "\(pages.count)"])
    }

    static func detailPages(_ records: [(monitor: String, identifier: String, record: MonitorRecord)], vehicle: String)
        -> [[UInt8]]
    {
        var pages: [[String]] = [[]]
        var size = 0
        for r in records {
            var line = JSONLine()
            line.add("monitor", r.monitor)
            line.add("identifier", r.identifier)
            line.add("state", r.record.state.rawValue)
            line.add("since", orNull: r.record.since.map(iso8601))
            if size + line.text.utf8.count + 1 > maximumMessageBytes - 512, !pages[pages.count - 1].isEmpty {
                pages.append([])
                size = 0
            }
            size += line.text.utf8.count + 1
            pages[pages.count - 1].append(line.text)
        }
        return pages.enumerated().map { k, conditions in
            var line = JSONLine()
            line.add("vehicle", vehicle)
            line.add("page", k + 1)
            line.add("pages", pages.count)
            line.addRaw("conditions", "[\(conditions.joined(separator: ","))]")
            return Array(line.text.utf8)
        }
    }
}
