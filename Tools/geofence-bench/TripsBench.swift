import ArgumentParser
import Dispatch
import Foundation
import GeofenceCore
import ReceiverSimulation
import Synchronization

/// `geofence-bench trips`: trips and stops against drives whose stops and distances are known, with and
/// without multipath jumps.
struct TripsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trips",
        abstract: "Trip and stop counts, times and odometer errors on drives with known stops.",
        discussion: """
            Each drive is a day's errands (StopAndGoDrive.errands: 5 to 9 legs of 0.6 to 4 km at 8 to 25 m/s, \
            each followed by a light or a stop) under a 3 m receiver with errors correlated over 20 s, fed \
            through MonitorSet as the agent feeds it. One JSON line per case (clean, with 50-300 m jumps): \
            the share of drives with exactly the truth's stops and trips, arrival and departure errors in \
            seconds from the first fix that could see them, and the odometer's relative error (p50, p95, \
            max), beside an odometer of positions on the same fixes.

            Example:
              swift run -c release geofence-bench trips --drives 200
            """
    )

    @Option(help: "Drives per case.")
    var drives = 200

    func run() throws {
        for jumps in [false, true] {
            print(measure(jumps: jumps))
            fflush(nil)
        }
    }

    private struct Sample {
        var exact = false
        var timeErrors: [Double] = []
        var distanceErrors: [Double] = []
        var positionErrors: [Double] = []
    }

    private func measure(jumps: Bool) -> String {
        let receiver = SimulatedReceiver.Profile(accuracy: 3, correlationTime: 20, underReportingRate: 0.1)
        let samples = Mutex<[Sample]>([])
        DispatchQueue.concurrentPerform(iterations: drives) { k in
            var rng = SplitMix64(seed: UInt64(33_000 + k))
            let drive = StopAndGoDrive.errands(&rng)
            let episodes = jumps ? drive.jumps(&rng) : []
            let fixes = drive.fixes(receiver, seed: UInt64(k), episodes: episodes)
            let s = Self.sample(drive, fixes)
            samples.withLock { $0.append(s) }
        }
        let all = samples.withLock { $0 }
        let times = all.flatMap(\.timeErrors).sorted()
        let distances = all.flatMap(\.distanceErrors).sorted()
        let positions = all.flatMap(\.positionErrors).sorted()
        func q(_ v: [Double], _ p: Double) -> Double { DecisionsBench.quantile(v, p) }
        return jsonLine([
            ("case", jumps ? "with 50-300 m jumps every 1-3 minutes" : "clean"),
            ("drives", drives),
            ("exact_stops_and_trips", rounded(Double(all.filter(\.exact).count) / Double(max(all.count, 1)), 4)),
            ("time_error_s_p50", rounded(q(times, 0.5), 2)), ("time_error_s_p95", rounded(q(times, 0.95), 2)),
            ("time_error_s_max", rounded(times.last ?? .nan, 2)),
            ("odometer_error_p50", rounded(q(distances, 0.5), 5)),
            ("odometer_error_p95", rounded(q(distances, 0.95), 5)),
            ("odometer_error_max", rounded(distances.last ?? .nan, 5)),
            ("positions_odometer_error_p50", rounded(q(positions, 0.5), 4)),
            ("positions_odometer_error_max", rounded(positions.last ?? .nan, 4)),
        ])
    }

    private static func sample(_ drive: StopAndGoDrive, _ fixes: [Location]) -> Sample {
        var monitors = MonitorSet()
        var stops: [Stop] = []
        var trips: [Trip] = []
        for fix in fixes {
            for event in monitors.process(fix).tripEvents {
                switch event {
                case .stopStarted(let s): stops.append(s)
                case .stopEnded(let s): if !stops.isEmpty { stops[stops.count - 1] = s }
                case .tripEnded(let t): trips.append(t)
                case .tripStarted: break
                }
            }
        }
        let truth = drive.truth(minimalParking: TripSettings().minimalParkingDuration)
        var s = Sample()
        s.exact = stops.count == truth.stops.count && trips.count == truth.trips.count
        guard s.exact else { return s }
        func firstFix(_ t: Date) -> Date {
            drive.start.addingTimeInterval(t.timeIntervalSince(drive.start).rounded(.up))
        }
        for (k, (stop, want)) in zip(stops, truth.stops).enumerated() {
            if k > 0 { s.timeErrors.append(abs(stop.arrival.timeIntervalSince(firstFix(want.arrival)))) }
            if let d = want.departure, let got = stop.departure {
                s.timeErrors.append(abs(got.timeIntervalSince(firstFix(d))))
            }
        }
        for (trip, distance) in zip(trips, truth.trips) {
            s.distanceErrors.append(abs(trip.distance - distance) / distance)
            // The same trip summed from positions, fix to fix while the receiver says it moves.
            let span = fixes.filter { $0.timestamp >= trip.start && $0.timestamp <= (trip.end ?? trip.lastFix) }
            let summed = zip(span, span.dropFirst()).reduce(0.0) { total, pair in
                pair.1.speed >= 0.5 ? total + Geodesic.distance(pair.0.coordinate, pair.1.coordinate) : total
            }
            s.positionErrors.append(abs(summed - distance) / distance)
        }
        return s
    }
}
