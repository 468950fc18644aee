import Foundation

/// How speed zones (a condition's `speedLimit`) turn speeds into `overspeed` episodes. docs/monitoring.md
/// explains each default.
public struct OverspeedSettings: Sendable, Equatable, Codable {
    /// km/h over the limit that are allowed.
    public var tolerance: Double = 5
    /// Seconds the speed must stay over the limit plus the tolerance, judged at the monitor's confidence
    /// from the speed's accuracy, before `overspeed`; and back under it (less the hysteresis) before
    /// `overspeedEnded`.
    public var minimumDuration: Double = 10
    /// km/h under limit plus tolerance that the speed must fall to for the episode to end, so that a speed
    /// hovering at the threshold gives one episode, not many.
    public var hysteresis: Double = 5
    /// The 1-sigma speed accuracy (m/s) assumed for a fix that carries none.
    public var unknownSpeedAccuracy: Double = 0.5

    public init() {}
}

/// What an overspeed event reports.
public struct OverspeedDetail: Sendable, Equatable, Codable {
    /// The limit that applied (km/h): the lowest of the speed zones the vehicle is in.
    public var limit: Double
    /// The highest and the mean speed (km/h) of the fixes since the excess began.
    public var peakSpeed: Double
    public var meanSpeed: Double
    /// On `overspeedEnded`: seconds from the excess's start to its end, and metres travelled meanwhile.
    public var duration: Double?
    public var distance: Double?
}

/// One vehicle's overspeed state: pure, fed each accepted fix with the limit that applies there.
///
/// An excess counts only when the speed is over limit + tolerance with the monitor's confidence (speed −
/// z·σ, σ the fix's speed accuracy), so a vehicle driving at the limit with noisy speeds never starts
/// one; it must last `minimumDuration`. The episode ends when the speed has stayed at or under
/// limit + tolerance − hysteresis for `minimumDuration`, or at once when no speed zone applies any more.
public struct OverspeedDetector: Sendable {
    public let settings: OverspeedSettings
    let standardDeviations: Double

    /// The zone that set the limit, and the limit.
    public struct Zone: Sendable, Equatable {
        public var identifier: String
        public var name: String?
        public var limit: Double
        public init(identifier: String, name: String?, limit: Double) {
            self.identifier = identifier
            self.name = name
            self.limit = limit
        }
    }

    /// Fixes since the excess began: when, where, how fast.
    struct Episode: Sendable {
        var zone: Zone
        var start: Location
        var last: Location
        var peak: Double
        var sum: Double
        var count: Int
        var distance: Double
        /// Published (`overspeed` went out).
        var confirmed = false
        /// Since when the speed has been back under the end threshold (nil: it is not).
        var calmSince: Date?
    }
    var episode: Episode?

    public init(settings: OverspeedSettings, confidence: Double) {
        self.settings = settings
        standardDeviations = NormalDistribution.quantile(confidence)
    }

    /// Whether an overspeed is under way (published).
    public var isOverspeeding: Bool { episode?.confirmed == true }

    /// Feeds one fix and the zone whose limit applies there (nil: none); returns the event it causes.
    public mutating func update(_ fix: Location, zone: Zone?) -> (kind: EventKind, zone: Zone, detail: OverspeedDetail)?
    {
        guard fix.speed >= 0, fix.speed.isFinite else { return nil }
        let speed = fix.speed * 3.6
        let sigma =
            (fix.speedAccuracy > 0 && fix.speedAccuracy.isFinite ? fix.speedAccuracy : settings.unknownSpeedAccuracy)
            * 3.6
        guard let zone else { return end(at: fix) }
        guard var current = episode else {
            if speed - standardDeviations * sigma > zone.limit + settings.tolerance {
                episode = Episode(zone: zone, start: fix, last: fix, peak: speed, sum: speed, count: 1, distance: 0)
            }
            return nil
        }
        current.distance += Geodesic.distance(current.last.coordinate, fix.coordinate)
        current.last = fix
        current.peak = max(current.peak, speed)
        current.sum += speed
        current.count += 1
        let over = speed - standardDeviations * sigma > zone.limit + settings.tolerance
        if !current.confirmed {
            guard over else {
                episode = nil  // the excess did not last
                return nil
            }
            episode = current
            guard fix.timestamp.timeIntervalSince(current.start.timestamp) >= settings.minimumDuration else {
                return nil
            }
            episode!.confirmed = true
            return (.overspeed, current.zone, detail(current, ended: false))
        }
        current.zone.limit = zone.limit
        if speed <= zone.limit + settings.tolerance - settings.hysteresis {
            current.calmSince = current.calmSince ?? fix.timestamp
        } else {
            current.calmSince = nil
        }
        episode = current
        if let calm = current.calmSince, fix.timestamp.timeIntervalSince(calm) >= settings.minimumDuration {
            return end(at: fix, endedAt: calm)
        }
        return nil
    }

    /// Ends an episode: `overspeedEnded` for a published one, at `endedAt` (when the speed came back
    /// under) or at the fix.
    private mutating func end(at fix: Location, endedAt: Date? = nil) -> (
        kind: EventKind, zone: Zone, detail: OverspeedDetail
    )? {
        guard let current = episode else { return nil }
        episode = nil
        guard current.confirmed else { return nil }
        var detail = detail(current, ended: true)
        detail.duration = (endedAt ?? fix.timestamp).timeIntervalSince(current.start.timestamp)
        return (.overspeedEnded, current.zone, detail)
    }

    private func detail(_ e: Episode, ended: Bool) -> OverspeedDetail {
        OverspeedDetail(
            limit: e.zone.limit, peakSpeed: e.peak, meanSpeed: e.sum / Double(e.count), duration: nil,
            distance: ended ? e.distance : nil)
    }
}
