import Foundation
import GeofenceCore

/// What our topics send of each live update (pure, on the fixes' timeline): the track's batches, and the
/// retained `location` at its own pace, slower while parked. A parked vehicle adds no point to the track
/// but the one where it stopped.
struct LivePacing: Sendable {
    var settings: FleetTopicsSettings
    private var batch: [TrackEncoding.Point] = []
    private var locationPace: LocationPace
    private var lastStationary: Bool?

    init(settings: FleetTopicsSettings) {
        self.settings = settings
        locationPace = LocationPace(
            movingSeconds: settings.locationIntervalSeconds, parkedSeconds: settings.parkedIntervalSeconds)
    }

    struct Decision: Equatable {
        /// A batch to send on `track`, closed by this update.
        var batch: [TrackEncoding.Point]?
        /// Whether `location` is replaced by this update.
        var location: Bool
    }

    mutating func take(_ update: LiveUpdate) -> Decision {
        let time = update.location.timestamp
        let changed = lastStationary != update.isStationary
        var decision = Decision(batch: nil, location: false)
        if settings.trackBatchSeconds > 0, changed || !update.isStationary {
            let point = TrackEncoding.Point(update)
            if let first = batch.first, point.time.timeIntervalSince(first.time) >= settings.trackBatchSeconds {
                decision.batch = batch
                batch = []
            }
            batch.append(point)
            // A stop, or a full batch, goes at once: a dashboard sees where the vehicle stopped.
            if update.isStationary || batch.count >= settings.trackMaximumPoints {
                decision.batch = (decision.batch ?? []) + batch
                batch = []
            }
        }
        decision.location = locationPace.take(at: time, stationary: update.isStationary)
        lastStationary = update.isStationary
        return decision
    }

    /// A location was sent for another reason (a request): the pace counts from it.
    mutating func sentLocation(at time: Date) { locationPace.sent(at: time) }
}
