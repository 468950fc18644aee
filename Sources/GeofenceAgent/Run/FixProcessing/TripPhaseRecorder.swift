import AgentOutputs
import Foundation
import GeofenceCore
import Places

/// When the trip detector's phase is stored: with each trip event, at a stop, and every `interval` (GPS
/// time) while a trip goes on, so that a restart resumes the trip with its distance.
struct TripPhaseRecorder {
    /// The store's setting that holds the phase.
    static let key = "trips.phase"
    /// A crash loses at most this much of a trip's distance. Each store is two pages of the log (about 8 kB):
    /// every 10 minutes that is 14 bytes a fix at 1 Hz (every 2 minutes cost 70, past the storage budget).
    static let interval: TimeInterval = 600

    private var storedAt: Date?

    /// Whether a fix needs a commit: it has trip events, or a trip goes on and `interval` has passed. Asked
    /// first, so that most fixes hand nothing over (the outputs, the places) to be told of none.
    func isDue(_ events: [TripEvent], phase: TripDetector.Phase, at location: Location) -> Bool {
        guard events.isEmpty else { return true }
        guard case .driving = phase else { return false }
        return location.timestamp.timeIntervalSince(storedAt ?? .distantPast) >= Self.interval
    }

    /// The commit a fix's trip events need, with the phase they leave; while a trip goes on, the phase alone
    /// every `interval`. Nil when none is due (`isDue`).
    mutating func commit(
        for events: [TripEvent], phase: TripDetector.Phase, at location: Location, outputs: MultiplexOutput,
        places: (any PlaceFinding)?
    ) -> PendingCommit? {
        guard isDue(events, phase: phase, at: location) else { return nil }
        let items = events.flatMap { event in
            outputs.messages(for: .trip(TripHappening(event: event, places: places))).compactMap(\.outboxItem)
        }
        storedAt = location.timestamp
        return PendingCommit(tripPhase: phase, items: items)
    }
}
