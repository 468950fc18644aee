import Foundation

/// What one closed epoch amounts to.
public enum AssembledFix: Sendable, Equatable {
    case location(Location)
    /// The receiver reports no fix (mode 0 or 1): there is no position, whatever the sentence carried.
    case noFix(device: String?)
}

/// Turns coalesced epochs into `Location`s: accuracy mapped to 1-sigma, the receiver's timeline, speed
/// spikes dropped, GST and satellite counts joined in, and one device followed. Pure; one per source.
public struct LocationAssembler: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Follow only this device path; nil follows the best active one.
        public var device: String?
        public var maximumSpeed: Double = 100
        public var maximumAcceleration: Double = 10
        /// The last fix time a previous run of the agent gave (restored from the store): every receiver's
        /// timeline resumes after it (`FixClock(resumingAfter:)`).
        public var timelineFloor: Date?
        public init(device: String? = nil) { self.device = device }
    }

    private struct DeviceState {
        var clock: FixClock
        var speeds: SpeedSpikeFilter
        /// The last few GSTs: an epoch closes when the next one starts, and the next GST may be in by then.
        var noises: [PseudorangeNoise] = []
        var satellitesUsed: Int?
        var lastEpochTime: Date?
        /// The device's name, made once rather than at every fix.
        var name: DeviceName?
    }

    private var devices: [String: DeviceState] = [:]
    private var selector: DeviceSelector
    private let settings: Settings

    public init(settings: Settings = Settings()) {
        self.settings = settings
        selector = DeviceSelector(configuredPath: settings.device)
    }

    /// The device the assembler follows now.
    public var followedDevice: String? { selector.current }

    public mutating func note(noise: PseudorangeNoise) {
        update(noise.device) { state in
            state.noises.append(noise)
            if state.noises.count > 4 { state.noises.removeFirst() }
        }
    }

    public mutating func note(satellitesUsed: Int, device: String?) {
        update(device) { $0.satellitesUsed = satellitesUsed }
    }

    public mutating func removed(device: String) {
        // The receiver's timeline goes on: one plugged back in on the same path (or its next session) must
        // not take the monitors back in time. Everything else about it starts again.
        devices[device] = devices[device].map { DeviceState(clock: $0.clock, speeds: newSpeedFilter()) }
        selector.remove(device: device)
    }

    /// The location for a closed epoch, or nil when it belongs to another device or repeats an epoch
    /// already delivered (its reports straddled the quiet period).
    public mutating func assemble(_ report: ReceiverReport, wallClock: Date) -> AssembledFix? {
        let key = report.device ?? ""
        var state =
            devices[key]
            ?? DeviceState(clock: FixClock(resumingAfter: settings.timelineFloor), speeds: newSpeedFilter())
        defer { devices[key] = state }
        if let time = report.time, let last = state.lastEpochTime, time == last { return nil }
        if report.time != nil { state.lastEpochTime = report.time }

        guard report.hasPosition, let latitude = report.latitude, let longitude = report.longitude else {
            return selector.isFollowing(report.device) ? .noFix(device: report.device) : nil
        }
        // GST describes its own epoch; a GST from another epoch says nothing about this fix.
        let noise = state.noises.last { $0.time == report.time && report.time != nil }
        let horizontal = AccuracyModel.horizontal(report, noise: noise)
        guard
            selector.accept(
                device: report.device, mode: report.mode, accuracy: horizontal, received: report.receivedAtNanoseconds)
        else {
            return nil
        }
        // A fix without GPS time before the first one is held back (FixClock: GPS time is the truth).
        guard
            let timestamp = state.clock.place(
                gpsTime: report.time, received: report.receivedAtNanoseconds, wallClock: wallClock)?.0
        else { return nil }
        // A course is an angle from north, 0 up to 360 (which is 0); anything else is no course.
        let course = report.track.flatMap { (0...360).contains($0) ? ($0 == 360 ? 0 : $0) : nil }
        let speed = state.speeds.filter(speed: report.speed, hasCourse: course != nil, at: timestamp)
        if state.name == nil, let device = report.device { state.name = DeviceName(device) }
        var location = Location(
            coordinate: Coordinate(latitude: latitude, longitude: longitude),
            altitudeHAE: report.altitudeHAE.flatMap { $0.isFinite ? $0 : nil },
            altitudeMSL: report.altitudeMSL.flatMap { $0.isFinite ? $0 : nil },
            horizontalAccuracy: horizontal,
            verticalAccuracy: report.mode >= 3 ? AccuracyModel.vertical(report, noise: noise) : -1,
            speed: speed ?? -1,
            speedAccuracy: speed == nil ? -1 : AccuracyModel.oneDimensional95Sigma(report.eps),
            course: course ?? -1,
            courseAccuracy: course == nil ? -1 : AccuracyModel.oneDimensional95Sigma(report.epd),
            climb: report.climb.flatMap { $0.isFinite ? $0 : nil },
            timestamp: timestamp,
            gpsTime: report.time,
            receivedAtNanoseconds: report.receivedAtNanoseconds,
            mode: report.mode >= 3 ? .threeD : .twoD,
            satellitesUsed: state.satellitesUsed
        )
        location.deviceName = state.name
        return .location(location)
    }

    private func newSpeedFilter() -> SpeedSpikeFilter {
        SpeedSpikeFilter(maximumSpeed: settings.maximumSpeed, maximumAcceleration: settings.maximumAcceleration)
    }

    private mutating func update(_ device: String?, _ body: (inout DeviceState) -> Void) {
        let key = device ?? ""
        var state =
            devices[key]
            ?? DeviceState(clock: FixClock(resumingAfter: settings.timelineFloor), speeds: newSpeedFilter())
        body(&state)
        devices[key] = state
    }
}
